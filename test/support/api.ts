// Helpers for the black-box API tests, on top of the gateway harness (gateway.ts).
import { signRequest } from '../../sdk/signing.js';
import { createWallet, type MerchantCredentials } from '../../src/cli/admin.js';
import type { TestGateway } from './gateway.js';

export const TABLES = ['transactions', 'nonces', 'refunds', 'outbox'] as const;

/** Row counts of the tables a request could write to, to prove a refused request left nothing. */
export async function rowCounts(gw: TestGateway): Promise<Record<(typeof TABLES)[number], number>> {
  const out = {} as Record<(typeof TABLES)[number], number>;
  for (const table of TABLES) {
    const row = await gw.store.db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    out[table] = Number(row.n);
  }
  return out;
}

/** POSTs raw text with a chosen content type (JSON when not given, none when null); returns status, text and parsed JSON. */
export async function rawPost(
  gw: TestGateway,
  path: string,
  body: string | undefined,
  contentType: string | null = 'application/json;charset=UTF-8',
): Promise<{ status: number; text: string; json: any }> {
  const headers: Record<string, string> = {};
  if (contentType !== null) headers['content-type'] = contentType;
  // As bytes: for a string body fetch would add `text/plain;charset=UTF-8` when no type is given.
  const res = await fetch(gw.url + path, {
    method: 'POST',
    headers,
    ...(body !== undefined && { body: Buffer.from(body) }),
  });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json };
}

export async function rawGet(
  gw: TestGateway,
  pathAndQuery: string,
): Promise<{ status: number; text: string; contentType: string }> {
  const res = await fetch(gw.url + pathAndQuery);
  return { status: res.status, text: await res.text(), contentType: res.headers.get('content-type') ?? '' };
}

/** The fields with a signature over them, as the SDK signs. */
export function signed(fields: Record<string, string>, apiKey: string): Record<string, string> {
  return { ...fields, signature: signRequest(fields, apiKey) };
}

/**
 * JSON text of a body in which the named fields are written as JSON numbers with exactly the
 * given text (`"amount":120.00`), as some clients send them.
 */
export function jsonWithNumbers(body: Record<string, string>, numbers: Record<string, string>): string {
  let text = JSON.stringify(body);
  for (const [name, number] of Object.entries(numbers)) {
    const quoted = `${JSON.stringify(name)}:${JSON.stringify(body[name])}`;
    if (!text.includes(quoted)) throw new Error(`${name} is not in the body`);
    text = text.replace(quoted, `${JSON.stringify(name)}:${number}`);
  }
  return text;
}

/** Creates a merchant-hosted (host_type 1) transaction; returns the reply, its nonce and order_id. */
export async function createHosted(
  gw: TestGateway,
  over: Record<string, string | undefined> = {},
  merchant?: MerchantCredentials,
): Promise<{ reply: any; nonce: string; order_id: string; merchant_reference: string }> {
  const { reply, order_id, merchant_reference } = await gw.create({ host_type: '1', ...over }, merchant);
  return { reply, nonce: reply.nonce as string, order_id, merchant_reference };
}

export function gatewayData(gw: TestGateway, nonce: string): Promise<any> {
  return gw.get(`/v2/merchanthosted/gatewaydata/${encodeURIComponent(nonce)}`);
}

/** A second wallet of the test merchant's user, in the same credentials shape. */
export async function addWallet(
  gw: TestGateway,
  currency: string,
  methods?: string,
  merchant: MerchantCredentials = gw.merchant,
): Promise<MerchantCredentials> {
  const w = await createWallet(gw.store, {
    user_id: merchant.user_id,
    currency,
    ...(methods !== undefined && { methods }),
  });
  return { ...merchant, wallet_id: w.wallet_id, api_key: w.api_key, currency: w.currency };
}

/** Waits until `check` is true, polling; fails with `what` if it never is. */
export async function waitUntil(check: () => boolean | Promise<boolean>, what: string, tries = 500): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`gave up waiting until ${what}`);
}

/** Signed refund body. */
export function refundBody(
  gw: TestGateway,
  order_id: string,
  refund_amount: string,
  reference = 'refund',
  merchant: MerchantCredentials = gw.merchant,
): Record<string, string> {
  return signed({ user_id: merchant.user_id, order_id, refund_amount, reference }, merchant.api_key);
}

/** Signed cancel body in the spec's sorted form. */
export function cancelBody(
  gw: TestGateway,
  merchant_reference: string,
  merchant: MerchantCredentials = gw.merchant,
): Record<string, string> {
  return signed({ user_id: merchant.user_id, merchant_reference }, merchant.api_key);
}

// Starts the real gateway on a random port for black-box tests, on SQLite or PostgreSQL,
// with a fresh database and a merchant, and gives signed-request helpers built on the SDK.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import { startGateway, type RunningGateway, type ServeOptions } from '../../src/server.js';
import { openStore } from '../../src/store/open.js';
import type { SqlStore } from '../../src/store/sql-store.js';
import { createMerchant, type MerchantCredentials } from '../../src/cli/admin.js';
import { signRequest } from '../../sdk/signing.js';
import { TEST_MASTER_KEY } from './channels.js';
import { createTestDatabase } from './pg-db.js';

export type EngineName = 'sqlite' | 'postgres';
export const ENGINES: EngineName[] = ['sqlite', 'postgres'];

export interface TestGateway extends RunningGateway {
  engine: EngineName;
  merchant: MerchantCredentials;
  /** POST JSON to a path; returns the parsed reply. */
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<any>;
  get(pathAndQuery: string): Promise<any>;
  /** A complete, signed hosted-checkout creation body; `over` replaces or adds fields before signing. */
  createBody(over?: Record<string, string | undefined>, merchant?: MerchantCredentials): Record<string, string>;
  /** Creates a transaction and returns the reply and its order_id. */
  create(
    over?: Record<string, string | undefined>,
    merchant?: MerchantCredentials,
  ): Promise<{ reply: any; order_id: string; merchant_reference: string }>;
  /** Settles a sandbox payment as the channel would. */
  pay(order_id: string, result?: 'paid' | 'failed' | 'rejected', extra?: Record<string, string>): Promise<any>;
  /** Signed query by merchant_reference. */
  query(merchant_reference: string, opts?: { block?: boolean; merchant?: MerchantCredentials }): Promise<any>;
  newMerchant(currency?: string): Promise<MerchantCredentials>;
}

let refCounter = 0;
export function uniqueRef(prefix = 'ref'): string {
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${++refCounter}`;
}

export async function databaseFor(engine: EngineName): Promise<{ database: string; cleanup: () => void }> {
  if (engine === 'postgres') return { database: await createTestDatabase(inject('pgUrl')), cleanup: () => {} };
  const dir = mkdtempSync(join(tmpdir(), 'gw-test-'));
  return { database: join(dir, 'gateway.db'), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A fresh, migrated store of its own on `engine` (no server), and how to remove its database. */
export async function storeFor(engine: EngineName): Promise<{ store: SqlStore; cleanup: () => void }> {
  const db = await databaseFor(engine);
  return { store: await openStore(db.database), cleanup: db.cleanup };
}

/**
 * A gateway on a fresh database (or `opts.database`), with a merchant. Closing it checks the books
 * first (`gateway ledger check`: every entry balanced, every kept balance its lines' sum, every paid
 * order and refund with its entries) and fails when they are not sound, so every test file that
 * moves money through a gateway ends with the ledger's check; a test that breaks the books on
 * purpose says `checkLedgerOnClose: false`.
 */
export async function startTestGateway(
  engine: EngineName,
  { checkLedgerOnClose = true, ...opts }: Partial<ServeOptions> & { checkLedgerOnClose?: boolean } = {},
): Promise<TestGateway> {
  const { database, cleanup } = opts.database
    ? { database: opts.database, cleanup: () => {} }
    : await databaseFor(engine);
  // Notification delivery is off unless a test asks for it (opts.notify): the default callback_url
  // is a real outside host, and tests never send traffic off the loopback interface.
  // Tests stop gateways with attempts still hanging: no shutdown grace unless a test asks for one.
  // Retention is off unless a test asks for it: tests write rows with made-up times, which a pass would remove.
  // So is the statements' import job: a test runs its rounds itself (test/reconciliation/job.test.ts).
  const gw = await startGateway({
    port: 0,
    host: '127.0.0.1',
    logLevel: 'silent',
    masterKey: TEST_MASTER_KEY,
    retentionIntervalMs: 0,
    statementImport: false,
    ...opts,
    notify: { stopGraceMs: 0, ...(opts.notify ?? { enabled: false }) },
    database,
  });
  const merchant = await createMerchant(gw.store, { name: 'Test Merchant', currency: 'NZD' });
  await gw.store.accounts.setRate('NZD', 'CNY', 4_644_300, Date.now());

  const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(gw.url + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json;charset=UTF-8', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    try {
      return JSON.parse(text);
    } catch {
      return { status: res.status, text };
    }
  };
  const get = async (pathAndQuery: string) => {
    const res = await fetch(gw.url + pathAndQuery);
    const text = await res.text();
    try {
      return JSON.parse(text);
    } catch {
      return { status: res.status, text };
    }
  };
  const createBody = (over: Record<string, string | undefined> = {}, m: MerchantCredentials = merchant) => {
    const body: Record<string, string> = {
      user_id: m.user_id,
      wallet_id: m.wallet_id,
      payment_method: 'alipay',
      amount: '120.00',
      return_url: 'https://merchantsite.com/checkout',
      callback_url: 'https://merchantsite.com/confirm',
      merchant_reference: uniqueRef(),
      ip: '122.122.122.1',
      version: '2.0',
      product_name: 'Pinot Noir, Otago',
    };
    for (const [k, v] of Object.entries(over)) {
      if (v === undefined) delete body[k];
      else body[k] = v;
    }
    body.signature = signRequest(body, m.api_key);
    return body;
  };
  const t: TestGateway = Object.assign(gw, {
    engine,
    merchant,
    post,
    get,
    createBody,
    async create(over: Record<string, string | undefined> = {}, m: MerchantCredentials = merchant) {
      const body = createBody(over, m);
      const reply = await post('/v2/transaction', body);
      if (reply.code !== 0) throw new Error(`create failed: ${JSON.stringify(reply)}`);
      const order = await gw.store.transactions.findByReference(m.user_id, body.merchant_reference);
      return { reply, order_id: order!.order_id, merchant_reference: body.merchant_reference };
    },
    async pay(order_id: string, result: 'paid' | 'failed' | 'rejected' = 'paid', extra: Record<string, string> = {}) {
      const res = await fetch(`${gw.url}/sandbox/pay/${order_id}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: new URLSearchParams({ result, ...extra }).toString(),
      });
      return res.json();
    },
    async query(merchant_reference: string, o: { block?: boolean; merchant?: MerchantCredentials } = {}) {
      const m = o.merchant ?? merchant;
      const params: Record<string, string> = { merchant_reference, user_id: m.user_id };
      if (o.block) params.is_block = '1';
      const signature = signRequest(params, m.api_key);
      const qs = new URLSearchParams({ user_id: m.user_id, signature, ...(o.block ? { is_block: '1' } : {}) });
      return get(`/v2/transaction/${encodeURIComponent(merchant_reference)}?${qs}`);
    },
    async newMerchant(currency = 'NZD') {
      return createMerchant(gw.store, { name: `Merchant ${uniqueRef('m')}`, currency });
    },
  });
  const close = gw.close.bind(gw);
  t.close = async () => {
    const check = checkLedgerOnClose ? await gw.store.ledger.check() : undefined;
    await close();
    cleanup();
    if (check && check.problems.length > 0)
      throw new Error(`the ledger is not sound at the end of the file: ${JSON.stringify(check.problems.slice(0, 5))}`);
  };
  return t;
}

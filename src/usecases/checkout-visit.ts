import { createHash, randomBytes } from 'node:crypto';
import { asciiUrl } from '../domain/ascii-url.js';
import { GatewayError } from '../domain/errors.js';
import { redirectionUrl, type BrowserKind } from '../domain/redirection.js';
import type { User, Wallet } from '../domain/account.js';
import { isPending, type Transaction } from '../domain/transaction.js';
import type { WaitAbort } from '../ports/signals.js';
import { cancelOrder } from './cancel-transaction.js';
import type { GatewayContext } from './context.js';
import { waitForChange } from './query-transaction.js';

// The customer's visit of the hosted page {host_url}/{nonce}. The nonce is a one-time credential:
// the first GET uses it up and hands the browser a random page token (a cookie scoped to the
// page's path); only the sha256 of the token is stored, next to the nonce. Reloads, the live
// status and the back link of that visit present the token; any other browser gets an error page.

/** How long a visit's page keeps working after the nonce was used (the cookie lives as long). */
export const CHECKOUT_VISIT_MS = 2 * 60 * 60 * 1000;
/** How long one live-status request waits for a change: below the idle timeout of common proxies. */
export const CHECKOUT_POLL_MS = 25_000;

export type VisitProblem = 'unknown' | 'used' | 'expired';

export interface CheckoutVisit {
  transaction: Transaction;
  user: User;
  wallet: Wallet;
  /** Set when this request started the visit: the token to give the browser. */
  newToken?: string;
}

export type VisitResult = { ok: true; visit: CheckoutVisit } | { ok: false; reason: VisitProblem };

export function hashPageToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/**
 * The state a provider's payer round trip carries for this visit (WeChat's web authorization):
 * derived from the token under a label of its own, so that neither the stored hash nor a logged
 * state gives it away, or the token.
 */
export function payerState(token: string): string {
  return createHash('sha256').update(`payer-state\n${token}`, 'utf8').digest('hex').slice(0, 32);
}

/** The visit that presents this token, if it is still within its lifetime. */
async function resumeVisit(ctx: GatewayContext, nonce: string, token: string | undefined): Promise<VisitResult> {
  if (!token) return { ok: false, reason: 'used' };
  const found = await ctx.store.transactions.findCheckoutVisit(nonce, hashPageToken(token));
  if (!found) return { ok: false, reason: 'used' };
  if (found.used_at + CHECKOUT_VISIT_MS <= ctx.now()) return { ok: false, reason: 'expired' };
  return withAccount(ctx, found.transaction);
}

async function withAccount(ctx: GatewayContext, transaction: Transaction, newToken?: string): Promise<VisitResult> {
  const [user, wallet] = await Promise.all([
    ctx.credentials.user(transaction.user_id),
    ctx.credentials.wallet(transaction.wallet_id),
  ]);
  if (!user || !wallet) return { ok: false, reason: 'unknown' };
  return { ok: true, visit: { transaction, user, wallet, ...(newToken !== undefined && { newToken }) } };
}

/**
 * GET of the page: the visit of this browser, or the first use of the nonce (which starts a visit).
 * `started` is told the new visit's token as soon as the nonce is used, before anything else can
 * fail: a page that then fails still hands the browser its visit, so a reload resumes it.
 */
export async function openCheckout(
  ctx: GatewayContext,
  nonce: string,
  token: string | undefined,
  started?: (token: string) => void,
): Promise<VisitResult> {
  if (token) {
    const resumed = await resumeVisit(ctx, nonce, token);
    if (resumed.ok || resumed.reason === 'expired') return resumed;
  }
  const fresh = randomBytes(24).toString('base64url');
  const use = await ctx.store.transactions.useNonce(nonce, ctx.now(), 0, hashPageToken(fresh));
  if (!use.ok) return { ok: false, reason: use.reason };
  started?.(fresh);
  return withAccount(ctx, use.transaction, fresh);
}

/**
 * Alipay cannot be paid inside WeChat: the page there asks the customer to choose "Open in
 * Browser" in WeChat's menu, which opens the page's current address in the phone's browser. That
 * browser has no visit cookie, so the address must carry the visit: the page sends WeChat to
 * `{page}?visit={token}`, and a browser presenting that token joins the same visit.
 */
export function needsHandoff(visit: CheckoutVisit, browser: BrowserKind): boolean {
  return browser === 'wechat' && visit.transaction.payment_method === 'alipay' && isPending(visit.transaction);
}

export type CheckoutStatus =
  { ok: true; visit: CheckoutVisit; redirect_url: string | null } | { ok: false; reason: VisitProblem };

/**
 * The live status of the visit's order: with `wait`, a pending order is watched for up to
 * CHECKOUT_POLL_MS. A final order comes with the URL to send this browser to, when the spec's
 * redirection rules apply to it.
 */
export async function checkoutStatus(
  ctx: GatewayContext,
  input: { nonce: string; token: string | undefined; browser: BrowserKind; wait: boolean },
  abort?: WaitAbort,
): Promise<CheckoutStatus> {
  const found = await resumeVisit(ctx, input.nonce, input.token);
  if (!found.ok) return found;
  const visit = found.visit;
  if (input.wait && isPending(visit.transaction)) {
    visit.transaction = await waitForChange(ctx, visit.transaction, abort, CHECKOUT_POLL_MS);
  }
  return { ok: true, visit, redirect_url: checkoutRedirect(visit, input.browser) };
}

export function checkoutRedirect(visit: CheckoutVisit, browser: BrowserKind): string | null {
  return redirectionUrl(visit.transaction, browser, visit.wallet.api_key);
}

export type LeaveResult =
  | { ok: true; to: 'back'; backPage_url: string; canceled: boolean }
  | { ok: true; to: 'page' }
  | { ok: false; reason: VisitProblem };

/**
 * The back link: cancels the pending order as a merchant's cancel would, then sends the customer
 * to backPage_url. When the channel cannot close the payment (the customer opened it in the app),
 * the order stays pending and may still be paid; the customer is sent back all the same.
 * A finished order is not canceled: the customer sees its result instead.
 */
export async function leaveCheckout(
  ctx: GatewayContext,
  nonce: string,
  token: string | undefined,
): Promise<LeaveResult> {
  const found = await resumeVisit(ctx, nonce, token);
  if (!found.ok) return found;
  const t = found.visit.transaction;
  if (t.backPage_url === null) return { ok: true, to: 'page' };
  // It goes into a Location header: ASCII only.
  const backPage_url = asciiUrl(t.backPage_url);
  try {
    await cancelOrder(ctx, t);
    return { ok: true, to: 'back', backPage_url, canceled: true };
  } catch (e) {
    if (!(e instanceof GatewayError)) throw e;
    if (e.code === 1) return { ok: true, to: 'back', backPage_url, canceled: false };
    return { ok: true, to: 'page' };
  }
}

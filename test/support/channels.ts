// Channel accounts for tests: a master key for the test process, the fakes' accounts (accounts.ts),
// and storing one for a wallet as `gateway channel set` does.
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { parseMasterKey } from '../../src/domain/sealed.js';
import type { ChannelAccount } from '../../src/ports/connector.js';
import { setChannelAccount } from '../../src/usecases/channel-accounts.js';
import type { TestGateway } from './gateway.js';

export * from './accounts.js';

/** The test process's master key, as text (GATEWAY_MASTER_KEY for a CLI run against a test gateway's database). */
export const TEST_MASTER_KEY_TEXT = randomBytes(32).toString('base64');
export const TEST_MASTER_KEY = parseMasterKey(TEST_MASTER_KEY_TEXT);

/** Stores the account (as `gateway channel set` does) for the gateway's merchant wallet unless another is named. */
export async function useAccount(gw: TestGateway, account: ChannelAccount): Promise<void> {
  const set = await setChannelAccount(gw.store.accounts, gw.ctx.connectors, TEST_MASTER_KEY, account, Date.now());
  if (!set.ok) throw new Error(`channel account refused: ${set.problems.join('; ')}`);
  gw.ctx.credentials.clear();
}

/**
 * Sends one merchant-hosted create several times at once: every one answers 0, one order is
 * stored, and the provider saw that order opened and no other (`opened`: its out_trade_nos so far;
 * the requests signed for the orders that lost are never sent).
 */
export async function expectConcurrentCreatesOpenOnce(
  gw: TestGateway,
  create: Record<string, string>,
  opened: () => Iterable<string>,
): Promise<void> {
  const before = new Set(opened());
  const answers = await Promise.all(Array.from({ length: 4 }, () => gw.post('/v2/transaction', create)));
  for (const a of answers) expect(a).toMatchObject({ code: 0 });
  const stored = await gw.store.db
    .selectFrom('transactions')
    .select('order_id')
    .where('merchant_reference', '=', create.merchant_reference)
    .execute();
  expect(stored).toHaveLength(1);
  expect([...opened()].filter((k) => !before.has(k))).toEqual([stored[0].order_id]);
}

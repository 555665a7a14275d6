// PostgreSQL: the statements compiled once (prepared.ts) run as named prepared statements, parsed
// and planned once per connection (postgres.ts); other SQL still runs as plain text.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMerchant, type MerchantCredentials } from '../../src/cli/admin.js';
import type { SqlStore } from '../../src/store/sql-store.js';
import { openStore } from '../../src/store/open.js';
import { statementName } from '../../src/store/statement-names.js';
import { databaseFor } from '../support/gateway.js';

describe('PostgreSQL named prepared statements', () => {
  let store: SqlStore;
  let merchant: MerchantCredentials;
  beforeAll(async () => {
    // One connection: every statement below runs in the same session.
    store = await openStore((await databaseFor('postgres')).database, { poolSize: 1 });
    merchant = await createMerchant(store, { name: 'Named', currency: 'NZD' });
  });
  afterAll(async () => store?.close());

  const prepared = async () =>
    (
      await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements`.execute(
        store.db,
      )
    ).rows;

  it('a compiled-once statement is prepared under its name once and reused', async () => {
    const before = new Set((await prepared()).map((p) => p.name));
    expect(await store.transactions.findResult(merchant.user_id, 'no-such-reference')).toBeUndefined();
    const added = (await prepared()).filter((p) => !before.has(p.name));
    expect(added).toHaveLength(1);
    expect(added[0].name).toMatch(/^gw_\d+$/);
    expect(statementName(added[0].statement)).toBe(added[0].name);
    expect(added[0].statement).toMatch(/from "transactions" where "user_id" = \$1 and "merchant_reference" = \$2/);
    // Again, with other values: the same statement, not a second one.
    const count = (await prepared()).length;
    expect(await store.transactions.findResult('U-other', 'another-reference')).toBeUndefined();
    expect(await prepared()).toHaveLength(count);
  });

  it("a provider's report read, its answer's write and the claim by ids are named statements too, one each", async () => {
    const before = new Set((await prepared()).map((p) => p.name));
    const run = async () => {
      expect(await store.transactions.findPayment('no-such-payment', 'committed')).toBeUndefined();
      expect(
        await store.transactions.setPaymentPayload(
          { out_trade_no: 'no-such-payment', order_id: 'no-such-order' },
          'qr text',
          1,
          true,
        ),
      ).toBe(false);
      expect(
        await store.outbox.claimQueued({ claimed_by: 'test', now: 1, lease_ms: 1000, event_ids: ['no-such-event'] }),
      ).toEqual([]);
      // Two ids: the same statement (an array), not a text per number of ids.
      expect(
        await store.outbox.claimQueued({ claimed_by: 'test', now: 1, lease_ms: 1000, event_ids: ['e1', 'e2'] }),
      ).toEqual([]);
    };
    await run();
    const added = (await prepared()).filter((p) => !before.has(p.name));
    // In the order of their texts.
    expect(added.map((p) => p.statement).sort()).toEqual([
      expect.stringMatching(/^select to_jsonb\(p\) as payment/),
      expect.stringMatching(
        /^update outbox set claimed_by = \$1, claimed_until = \$2\s+where event_id = any\(\$3::text\[\]\)/,
      ),
      expect.stringMatching(/^with p as \(\s+update channel_payments set payload = \$1/),
    ]);
    for (const p of added) expect(statementName(p.statement)).toBe(p.name);
    await run();
    expect((await prepared()).filter((p) => !before.has(p.name))).toHaveLength(3);
  });

  it('other SQL is not prepared by name', async () => {
    await store.accounts.listWallets(merchant.user_id);
    const names = (await prepared()).map((p) => p.statement);
    expect(names.some((s) => /from "wallets" where "user_id"/.test(s))).toBe(false);
  });
});

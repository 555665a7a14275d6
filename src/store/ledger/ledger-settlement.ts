import { sql, type Kysely } from 'kysely';
import { availableEntry, dueAmount, settlementCutoff } from '../../domain/ledger-settlement.js';
import type { Engine } from '../../ports/store.js';
import type { SettlementMove, SettlementRun } from '../../ports/ledger.js';
import type { Database } from '../schema.js';
import { postIn, walletBalancesIn } from './refund-books.js';

// The settlement run (domain/settlement.ts): every wallet with money pending has what is due moved
// to available, one entry per wallet. Wallets are taken in batches, each batch one unit; on
// PostgreSQL a batch is claimed with a transaction-scoped advisory lock, so that of the instances
// running the job at once one works and the others find the claim taken and stop (their next run
// finds nothing due), and each wallet's balance rows are locked as a refund's are.

const BATCH = 100;
/** The advisory lock's key: "settlement", as a number PostgreSQL's lock functions take. */
const CLAIM_KEY = 0x5e771e;

const PREFIX = 'wallet:';
const SUFFIX = ':pending';

export async function runSettlement(
  db: Kysely<Database>,
  engine: Engine,
  now: number,
  defaultDelayDays: number,
): Promise<SettlementRun> {
  const moves: SettlementMove[] = [];
  let after = '';
  let wallets = 0;
  for (;;) {
    const batch = await db
      .selectFrom('ledger_balances')
      .select(['account', 'currency'])
      .where('account', 'like', `${PREFIX}%${SUFFIX}`)
      .where('account', '>', after)
      .where('balance', '<', 0)
      .orderBy('account')
      .limit(BATCH)
      .execute();
    if (batch.length === 0) break;
    after = batch[batch.length - 1].account;
    const claimed = await db.transaction().execute(async (trx) => {
      if (engine === 'postgres') {
        const got = await sql<{ got: boolean }>`select pg_try_advisory_xact_lock(${CLAIM_KEY}) as got`.execute(trx);
        if (!got.rows[0]?.got) return false;
      }
      const ids = batch.map((b) => b.account.slice(PREFIX.length, -SUFFIX.length));
      const delays = await trx
        .selectFrom('wallet_settlement')
        .select(['wallet_id', 'delay_days'])
        .where('wallet_id', 'in', ids)
        .execute();
      for (const [i, row] of batch.entries()) {
        const wallet_id = ids[i];
        wallets++;
        const delay = delays.find((d) => d.wallet_id === wallet_id)?.delay_days ?? defaultDelayDays;
        const cutoff = settlementCutoff(now, delay);
        const balances = await walletBalancesIn(trx, wallet_id, row.currency, engine === 'postgres');
        const undue = await trx
          .selectFrom('ledger_lines')
          .select(sql<number | string | null>`sum(amount)`.as('sum'))
          .where('account', '=', row.account)
          .where('currency', '=', row.currency)
          .where('created_at', '>', cutoff)
          .where('entry_key', 'like', 'payment:%')
          .executeTakeFirst();
        // The kept balance is shown credit-normal; its lines' signed sum is its negation.
        const amount = dueAmount(-balances.pending, Number(undue?.sum ?? 0));
        if (amount === 0) continue;
        const entry = availableEntry({ wallet_id, currency: row.currency, amount, cutoff, created_at: now });
        if (await postIn(trx, entry)) moves.push({ wallet_id, currency: row.currency, amount });
      }
      return true;
    });
    if (!claimed) return { wallets, moves, claimed_elsewhere: true };
    if (batch.length < BATCH) break;
  }
  return { wallets, moves, claimed_elsewhere: false };
}

import { sql, type CompiledQuery, type Kysely } from 'kysely';
import { entryProblem, netLines, type JournalEntry } from '../../domain/ledger.js';
import type { Database } from '../schema.js';

// What posting a journal entry writes, for the repositories that post one in the same atomic unit
// as the state change it records: the entry (nothing when its key was posted before: the event was
// already recorded), its lines, and the kept balance of each wallet account it moves.

/** Refuses an entry that does not balance: a bug, never written. */
export function checkedEntry(entry: JournalEntry): JournalEntry {
  const problem = entryProblem(entry);
  if (problem) throw new Error(`ledger: ${problem}`);
  return entry;
}

/** The entry's row, inserted unless its key exists (then no row is affected, and nothing else is written). */
export function entryInsert(db: Kysely<Database>, e: JournalEntry): CompiledQuery {
  return db
    .insertInto('ledger_entries')
    .values({
      entry_key: e.entry_key,
      kind: e.kind,
      wallet_id: e.wallet_id,
      order_id: e.order_id,
      refund_id: e.refund_id,
      payout_id: e.payout_id,
      memo: e.memo,
      created_at: e.created_at,
    })
    .onConflict((oc) => oc.column('entry_key').doNothing())
    .compile();
}

export function linesInsert(db: Kysely<Database>, e: JournalEntry): CompiledQuery {
  return db
    .insertInto('ledger_lines')
    .values(
      e.lines.map((l, i) => ({
        entry_key: e.entry_key,
        line_no: i + 1,
        account: l.account,
        currency: l.currency,
        amount: l.amount,
        created_at: e.created_at,
      })),
    )
    .compile();
}

/** The wallet accounts the entry moves, each by the sum of its lines: the kept balances' changes. */
export function walletMoves(e: JournalEntry): { account: string; currency: string; amount: number }[] {
  return netLines(e.lines.filter((l) => l.account.startsWith('wallet:')));
}

export function balanceUpsert(
  db: Kysely<Database>,
  move: { account: string; currency: string; amount: number },
  now: number,
): CompiledQuery {
  return db
    .insertInto('ledger_balances')
    .values({ account: move.account, currency: move.currency, balance: move.amount, updated_at: now })
    .onConflict((oc) =>
      oc.columns(['account', 'currency']).doUpdateSet({
        balance: sql`ledger_balances.balance + excluded.balance`,
        updated_at: sql`excluded.updated_at`,
      }),
    )
    .compile();
}

import { sql, type CompiledQuery, type Kysely } from 'kysely';
import { entryProblem, netLines, type JournalEntry } from '../../domain/ledger.js';
import { DAY_MS } from '../../domain/ledger-settlement.js';
import type { Database } from '../schema.js';

// What posting a journal entry writes, for the repositories that post one in the same atomic unit
// as the state change it records: the entry (nothing when its key was posted before: the event was
// already recorded), its lines, and the kept balance of each wallet account it moves, in all and
// on the entry's day (statements add the days up instead of every line before them). The rows are
// built here once; SQLite and PostgreSQL's fallback run them as statements (postingStatements),
// PostgreSQL's settle as JSON parameters of its one statement.

/** The rows an entry writes, once it is checked to balance (an entry that does not is a bug, never written). */
export function postingRows(entry: JournalEntry): {
  entry: Database['ledger_entries'];
  lines: Database['ledger_lines'][];
  balances: Database['ledger_balances'][];
  days: Database['ledger_days'][];
} {
  const problem = entryProblem(entry);
  if (problem) throw new Error(`ledger: ${problem}`);
  const { lines, ...row } = entry;
  const moves = netLines(lines.filter((l) => l.account.startsWith('wallet:'))).sort((a, b) =>
    a.account < b.account ? -1 : a.account > b.account ? 1 : 0,
  );
  const day = Math.floor(entry.created_at / DAY_MS) * DAY_MS;
  return {
    entry: row,
    lines: lines.map((l, i) => ({ entry_key: entry.entry_key, line_no: i + 1, ...l, created_at: entry.created_at })),
    // The wallet accounts it moves, each by the sum of its lines: the kept balances' changes, in
    // account order, the order every unit takes their row locks in on PostgreSQL (no deadlock)...
    balances: moves.map((m) => ({
      account: m.account,
      currency: m.currency,
      balance: m.amount,
      updated_at: entry.created_at,
    })),
    // ...and the same on the entry's day (UTC), what a statement's opening balances add up.
    days: moves.map((m) => ({ account: m.account, currency: m.currency, day, amount: m.amount })),
  };
}

/** The statements that post an entry: `entry` first; `then` only if it inserted a row (its key is new). */
export function postingStatements(
  db: Kysely<Database>,
  entry: JournalEntry,
  /** Migration 0017 ran before ledger_days existed (0019 adds the days of what it posted). */
  opts: { days?: boolean } = {},
): { entry: CompiledQuery; then: CompiledQuery[] } {
  const rows = postingRows(entry);
  if (opts.days === false) rows.days = [];
  return {
    entry: db
      .insertInto('ledger_entries')
      .values(rows.entry)
      .onConflict((oc) => oc.column('entry_key').doNothing())
      .compile(),
    then: [
      db.insertInto('ledger_lines').values(rows.lines).compile(),
      ...rows.balances.map((b) =>
        db
          .insertInto('ledger_balances')
          .values(b)
          .onConflict((oc) =>
            oc.columns(['account', 'currency']).doUpdateSet({
              balance: sql`ledger_balances.balance + excluded.balance`,
              updated_at: sql`excluded.updated_at`,
            }),
          )
          .compile(),
      ),
      ...rows.days.map((d) =>
        db
          .insertInto('ledger_days')
          .values(d)
          .onConflict((oc) =>
            oc
              .columns(['account', 'currency', 'day'])
              .doUpdateSet({ amount: sql`ledger_days.amount + excluded.amount` }),
          )
          .compile(),
      ),
    ],
  };
}

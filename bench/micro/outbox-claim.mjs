// What one notification claim costs as one merchant's backlog grows: N due rows at one host (its
// slots nearly full, as when its endpoint is slow or down), a few due at two other hosts, delivered
// rows beside them; each round runs the claim's statement (limit 64, 4 a host, 1 slot left at the
// busy host) in a transaction of its own that is then rolled back: the statement's own time, which
// on SQLite is time the single writer is held. Run after `npm run build`:
//   node bench/micro/outbox-claim.mjs [sqlite|postgres] [N...]   (default: sqlite 0 400 5000 20000)
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import Database from 'better-sqlite3';
import { openStore } from '../../dist/src/store/open.js';
import { claimStatement } from '../../dist/src/store/outbox/base.js';
import { POSTGRES_CLAIM } from '../../dist/src/store/outbox/postgres.js';
import { SQLITE_CLAIM } from '../../dist/src/store/outbox/sqlite.js';
import { startPostgres } from '../lib/postgres.mjs';

const engine = process.argv[2] ?? 'sqlite';
const sizes = process.argv.length > 3 ? process.argv.slice(3).map(Number) : [0, 400, 5000, 20000];
const ROUNDS = 200;

let server = null;
let dir = null;
let database;
if (engine === 'postgres') {
  server = await startPostgres({});
  database = await server.createDatabase('claim');
} else {
  dir = mkdtempSync(join(tmpdir(), 'claim-'));
  database = join(dir, 'gateway.db');
}
const store = await openStore(database);
// Rows without an order: the foreign key is set aside for the filling (it is not what is measured).
const fill = async (rows) => {
  const values = (chunk) =>
    sql.join(
      chunk.map(
        (r) =>
          sql`(${r.id}, 'ord_bench', ${r.seq}, ${`https://${r.host}/n`}, ${r.host}, '{}', ${r.status}, 0, ${r.at}, 0)`,
      ),
    );
  const insert = (chunk) =>
    sql`insert into outbox (event_id, order_id, seq, callback_url, callback_host, payload, delivery_status, attempts, next_attempt_at, created_at) values ${values(chunk)}`;
  if (engine === 'postgres') {
    const c = new pg.Client({ connectionString: database });
    await c.connect();
    await c.query('set session_replication_role = replica');
    for (let i = 0; i < rows.length; i += 1000) {
      const compiled = insert(rows.slice(i, i + 1000)).compile(store.db);
      await c.query(compiled.sql, compiled.parameters);
    }
    await c.query('analyze outbox');
    await c.end();
  } else {
    await sql`pragma foreign_keys = off`.execute(store.db);
    for (let i = 0; i < rows.length; i += 1000) await insert(rows.slice(i, i + 1000)).execute(store.db);
  }
};

// The statement alone, on a connection of its own, in a transaction rolled back after each round.
const raw = await (async () => {
  if (engine === 'postgres') {
    const c = new pg.Client({ connectionString: database });
    await c.connect();
    return {
      begin: () => c.query('begin'),
      rollback: () => c.query('rollback'),
      run: async (q) => (await c.query(q.sql, q.parameters)).rowCount,
      close: () => c.end(),
    };
  }
  const db = new Database(database);
  const cache = new Map();
  const prep = (q) => cache.get(q) ?? cache.set(q, db.prepare(q)).get(q);
  return {
    begin: () => prep('begin immediate').run(),
    rollback: () => prep('rollback').run(),
    run: (q) => prep(q.sql).all(...q.parameters).length,
    close: () => db.close(),
  };
})();

let seq = 0;
const now = 10_000_000;
const row = (host, at, status = 'pending') => ({
  id: `evt_${randomBytes(16).toString('hex')}`,
  seq: seq++,
  host,
  at,
  status,
});
await fill([...Array.from({ length: 5000 }, (_, i) => row('busy.example:443', now - 900_000 + i, 'delivered'))]);
const more = [];
for (const h of ['a.example:443', 'b.example:443']) for (let i = 0; i < 3; i++) more.push(row(h, now - 10 + i));
let filled = 0;
for (const n of sizes) {
  for (; filled < n; filled++) more.push(row('busy.example:443', now - 500_000 + filled));
  await fill(more.splice(0));
  const input = {
    claimed_by: 'bench',
    now,
    lease_ms: 60_000,
    limit: 64,
    per_host: 4,
    host_limits: new Map([['busy.example:443', 1]]),
  };
  const compiled = claimStatement(engine === 'postgres' ? POSTGRES_CLAIM : SQLITE_CLAIM, input).compile(store.db);
  const times = [];
  let claimed = 0;
  for (let r = 0; r < ROUNDS; r++) {
    await raw.begin();
    const t = process.hrtime.bigint();
    claimed = await raw.run(compiled);
    times.push(Number(process.hrtime.bigint() - t) / 1000);
    await raw.rollback();
  }
  times.sort((a, b) => a - b);
  console.log(
    `${engine}: ${String(n).padStart(6)} due at one host: claim statement p50 ${times[ROUNDS >> 1].toFixed(0)} us, p90 ${times[Math.floor(ROUNDS * 0.9)].toFixed(0)} us (${claimed} rows a claim)`,
  );
}
await raw.close();
await store.close();
if (server) await server.stop();
if (dir) rmSync(dir, { recursive: true, force: true });

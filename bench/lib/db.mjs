// Direct database access for set-up work the API cannot do quickly: finding order ids,
// bulk-loading a million transactions, counting rows. Never used while a measurement runs.
import Database from 'better-sqlite3';
import pg from 'pg';

const SAFE = /^[A-Za-z0-9_-]+$/;
const lit = (s) => {
  if (!SAFE.test(s)) throw new Error(`unsafe literal ${s}`);
  return `'${s}'`;
};

/** SQL expressions for each transactions column, given the row number `i`. */
function rowExpressions(engine, m, nowMs) {
  const orderId = engine === 'sqlite' ? `printf('20000101%08d', i)` : `'20000101' || lpad(i::text, 8, '0')`;
  const paid = `i % 2 = 0`;
  return {
    order_id: orderId,
    user_id: lit(m.user_id),
    wallet_id: lit(m.wallet_id),
    merchant_reference: `'scale-' || i`,
    payment_method: `'alipay'`,
    host_type: '0',
    amount: '12000',
    currency: `'NZD'`,
    amount_cny: '55732',
    currency_rate: '4644300',
    product_name: `'Pinot Noir, Otago'`,
    return_url: `'http://127.0.0.1:9/return'`,
    callback_url: `'http://127.0.0.1:9/notify'`,
    ip: `'122.122.122.1'`,
    status: `CASE WHEN ${paid} THEN 'paid' ELSE 'pending' END`,
    channel: `'sandbox'`,
    channel_ref: `'sandbox-' || ${orderId}`,
    qr_code_url: `'http://127.0.0.1:9/sandbox/pay/' || ${orderId}`,
    refunded_amount: '0',
    status_seq: `CASE WHEN ${paid} THEN 1 ELSE 0 END`,
    created_at: `${nowMs} - i`,
    updated_at: `${nowMs}`,
    pay_time: `CASE WHEN ${paid} THEN ${nowMs} ELSE NULL END`,
  };
}

export async function openDb(engine, database) {
  if (engine === 'sqlite') {
    const db = new Database(database);
    db.pragma('busy_timeout = 10000');
    const conv = (sql) => sql.replace(/\$\d+/g, '?');
    const columns = () =>
      db
        .prepare(`PRAGMA table_info(transactions)`)
        .all()
        .map((c) => c.name);
    return {
      async all(sql, params = []) {
        return db.prepare(conv(sql)).all(...params);
      },
      async exec(sql) {
        db.exec(sql);
      },
      async orderIds(user_id, refs) {
        const stmt = db.prepare('SELECT order_id FROM transactions WHERE user_id = ? AND merchant_reference = ?');
        return new Map(refs.map((r) => [r, stmt.get(user_id, r)?.order_id]));
      },
      async bulkInsertTransactions(m, from, to) {
        const ex = rowExpressions('sqlite', m, Date.now());
        const cols = columns().filter((c) => c in ex);
        db.exec(`WITH RECURSIVE s(i) AS (SELECT ${from} UNION ALL SELECT i + 1 FROM s WHERE i < ${to})
          INSERT INTO transactions (${cols.map((c) => `"${c}"`).join(', ')}) SELECT ${cols.map((c) => ex[c]).join(', ')} FROM s`);
      },
      async analyze() {
        db.exec('ANALYZE');
        db.pragma('wal_checkpoint(TRUNCATE)');
      },
      async countTransactions() {
        return db.prepare('SELECT count(*) AS n FROM transactions').get().n;
      },
      async close() {
        db.close();
      },
    };
  }
  const pool = new pg.Pool({ connectionString: database, max: 2 });
  return {
    async all(sql, params = []) {
      return (await pool.query(sql, params)).rows;
    },
    async exec(sql) {
      await pool.query(sql);
    },
    async orderIds(user_id, refs) {
      const { rows } = await pool.query(
        'SELECT merchant_reference, order_id FROM transactions WHERE user_id = $1 AND merchant_reference = ANY($2)',
        [user_id, refs],
      );
      const map = new Map(rows.map((r) => [r.merchant_reference, r.order_id]));
      return new Map(refs.map((r) => [r, map.get(r)]));
    },
    async bulkInsertTransactions(m, from, to) {
      const ex = rowExpressions('postgres', m, Date.now());
      const { rows } = await pool.query(
        `SELECT column_name FROM information_schema.columns WHERE table_name = 'transactions' AND table_schema = current_schema()`,
      );
      const cols = rows.map((r) => r.column_name).filter((c) => c in ex);
      await pool.query(
        `INSERT INTO transactions (${cols.map((c) => `"${c}"`).join(', ')}) SELECT ${cols.map((c) => ex[c]).join(', ')} FROM generate_series(${from}, ${to}) AS s(i)`,
      );
    },
    async analyze() {
      await pool.query('VACUUM ANALYZE transactions');
      await pool.query('CHECKPOINT').catch(() => {});
    },
    async countTransactions() {
      return Number((await pool.query('SELECT count(*) AS n FROM transactions')).rows[0].n);
    },
    async close() {
      await pool.end();
    },
  };
}

/**
 * Fills the database with `size` orders of the merchant (bulk SQL, the gateway stopped), analyses it
 * and returns the count; `inspect(db)` may read it before it is closed.
 */
export async function bulkLoad(engine, database, m, size, log, inspect = async () => undefined) {
  const db = await openDb(engine, database);
  const t0 = Date.now();
  for (let from = 1; from <= size; from += 100_000)
    await db.bulkInsertTransactions(m, from, Math.min(size, from + 99_999));
  await db.analyze();
  const n = await db.countTransactions();
  const seen = await inspect(db, n);
  await db.close();
  log(`${engine}: ${n} transactions stored in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return { n, seen };
}

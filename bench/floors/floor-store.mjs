// Floor (e)'s storage (bench/floors/connector-floor.mjs): the least a gateway that keeps its orders
// must write, on either engine. SQLite through better-sqlite3 on the event loop (WAL, an fsync per
// durable commit); PostgreSQL through a pg Pool of 10, one statement each.
//   insert   the order, durably (before its provider is asked, or before its hosted page exists)
//   opening  a hosted page's payment about to be opened at the provider, durably (the nonce used,
//            the provider payment recorded: no payment at the provider the store does not know of)
//   setQr    what the provider answered (a QR, a page's address, a form), committed, not waited on to disk
//   markPaid the payment, durably, before the provider's notification is acknowledged

/** Floor (e)'s statements on either engine. */
export async function openStore({ engine, file, url }) {
  const table = `CREATE TABLE IF NOT EXISTS floor_orders (out_trade_no text PRIMARY KEY, merchant_reference text NOT NULL UNIQUE,
    amount text NOT NULL, status text NOT NULL, qr text, created_at bigint NOT NULL, opened_at bigint, paid_at bigint)`;
  if (engine === 'sqlite') {
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.exec(table);
    const full = () => db.pragma('synchronous = FULL');
    const normal = () => db.pragma('synchronous = NORMAL');
    const ins = db.prepare(
      'INSERT INTO floor_orders (out_trade_no, merchant_reference, amount, status, created_at) VALUES (?, ?, ?, ?, ?)',
    );
    const opening = db.prepare('UPDATE floor_orders SET opened_at = ? WHERE out_trade_no = ? AND opened_at IS NULL');
    const qr = db.prepare('UPDATE floor_orders SET qr = ? WHERE out_trade_no = ?');
    const paid = db.prepare(
      "UPDATE floor_orders SET status = 'paid', paid_at = ? WHERE out_trade_no = ? AND status = 'pending'",
    );
    return {
      insert: async (o) => {
        full();
        ins.run(o.out_trade_no, o.merchant_reference, o.amount, 'pending', Date.now());
      },
      opening: async (out_trade_no) => {
        full();
        return opening.run(Date.now(), out_trade_no).changes === 1;
      },
      setQr: async (out_trade_no, text) => {
        normal();
        qr.run(text, out_trade_no);
      },
      markPaid: async (out_trade_no) => {
        full();
        paid.run(Date.now(), out_trade_no);
      },
      close: async () => db.close(),
    };
  }
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  pool.on('error', () => {});
  await pool.query(table);
  return {
    insert: async (o) => {
      await pool.query({
        name: 'e_ins',
        text: "INSERT INTO floor_orders (out_trade_no, merchant_reference, amount, status, created_at) VALUES ($1, $2, $3, 'pending', $4)",
        values: [o.out_trade_no, o.merchant_reference, o.amount, Date.now()],
      });
    },
    opening: async (out_trade_no) => {
      const r = await pool.query({
        name: 'e_opening',
        text: 'UPDATE floor_orders SET opened_at = $1 WHERE out_trade_no = $2 AND opened_at IS NULL',
        values: [Date.now(), out_trade_no],
      });
      return r.rowCount === 1;
    },
    // As the gateway stores a provider's answer: one statement, its commit not waited on to disk.
    setQr: async (out_trade_no, text) => {
      await pool.query({
        name: 'e_qr',
        text: "WITH u AS (UPDATE floor_orders SET qr = $1 WHERE out_trade_no = $2 RETURNING 1) SELECT set_config('synchronous_commit', 'off', true), (SELECT count(*) FROM u)",
        values: [text, out_trade_no],
      });
    },
    markPaid: async (out_trade_no) => {
      await pool.query({
        name: 'e_paid',
        text: "UPDATE floor_orders SET status = 'paid', paid_at = $1 WHERE out_trade_no = $2 AND status = 'pending'",
        values: [Date.now(), out_trade_no],
      });
    },
    close: async () => pool.end(),
  };
}

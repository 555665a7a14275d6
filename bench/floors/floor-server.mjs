// Floor servers: the least a create can cost on this machine, measured with the same load
// generator and the same bodies as the gateway.
//   a: Fastify route, parses the JSON body, validates it with the gateway's create schema,
//      checks one HMAC-SHA256 signature (constant time). No database.
//   b: a + one INSERT into SQLite (WAL, synchronous=NORMAL) via better-sqlite3, on the event loop.
//   b-full: b with synchronous=FULL (one fsync per commit), for reference.
//   c: a + one INSERT into PostgreSQL through a pg Pool of 10.
// argv[2] is a JSON config: { mode, key, sqliteFile?, pgUrl? }. IPC: -> { type:'ready', url }, <- { type:'stop' }.
import Fastify from 'fastify';
import { createTransactionSchema } from '../../dist/src/http/schemas.js';
import { merchantSignatureOk } from './merchant-signature.mjs';

const cfg = JSON.parse(process.argv[2]);
const key = cfg.key;

const COLUMNS = [
  'merchant_reference',
  'user_id',
  'wallet_id',
  'payment_method',
  'amount',
  'return_url',
  'callback_url',
  'ip',
  'product_name',
  'created_at',
];
const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS floor_tx (
  id ${cfg.mode === 'c' ? 'bigserial' : 'integer'} PRIMARY KEY,
  merchant_reference text NOT NULL UNIQUE, user_id text NOT NULL, wallet_id text NOT NULL, payment_method text NOT NULL,
  amount text NOT NULL, return_url text NOT NULL, callback_url text NOT NULL, ip text NOT NULL, product_name text NOT NULL,
  created_at bigint NOT NULL)`;
const row = (b) => [
  b.merchant_reference,
  b.user_id,
  b.wallet_id,
  b.payment_method,
  b.amount,
  b.return_url,
  b.callback_url,
  b.ip,
  b.product_name,
  Date.now(),
];

let insert = async () => {};
let close = async () => {};
if (cfg.mode === 'b' || cfg.mode === 'b-full') {
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(cfg.sqliteFile);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${cfg.mode === 'b-full' ? 'FULL' : 'NORMAL'}`);
  db.exec(CREATE_TABLE);
  const stmt = db.prepare(`INSERT INTO floor_tx (${COLUMNS.join(',')}) VALUES (${COLUMNS.map(() => '?').join(',')})`);
  insert = async (b) => {
    stmt.run(row(b));
  };
  close = async () => db.close();
} else if (cfg.mode === 'c') {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: cfg.pgUrl, max: 10 });
  await pool.query(CREATE_TABLE);
  const text = `INSERT INTO floor_tx (${COLUMNS.join(',')}) VALUES (${COLUMNS.map((_, i) => `$${i + 1}`).join(',')})`;
  insert = async (b) => {
    await pool.query(text, row(b));
  };
  close = async () => pool.end();
}

const app = Fastify({ logger: false, bodyLimit: 64 * 1024 });
app.post('/v2/transaction', { schema: { body: createTransactionSchema } }, async (request) => {
  const body = request.body;
  if (!merchantSignatureOk(body, key)) return { code: 206, message: 'Signature from Merchant request is wrong' };
  await insert(body);
  return { code: 0, message: 'SUCCESS', merchant_reference: body.merchant_reference };
});
const address = await app.listen({ port: 0, host: '127.0.0.1' });

process.on('message', async (m) => {
  if (m?.type !== 'stop') return;
  await app.close();
  await close();
  process.exit(0);
});
process.on('disconnect', () => process.exit(0));
process.send({ type: 'ready', url: address, pid: process.pid });

// Kill -9 the gateway while notifications are in flight, restart it on the same SQLite file, and
// check the outbox against what the merchant's receiver actually saw: every notification is
// eventually delivered, and none is marked delivered unless the receiver answered `sent`.
// Runs the built CLI (`npm run build` first; `npm test` does it).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { signRequest } from '../../sdk/signing.js';
import { createMerchant, type MerchantCredentials } from '../../src/cli/admin.js';
import { openStore } from '../../src/store/open.js';
import { Receiver, type Received } from './receiver.js';

const ROOT = new URL('../..', import.meta.url).pathname;
const ENV = {
  LOG_LEVEL: 'info',
  GATEWAY_MODE: 'sandbox',
  NOTIFY_RETRY_SCHEDULE_MS: '200,400',
  NOTIFY_TIMEOUT_MS: '1000',
  NOTIFY_LEASE_MS: '2000',
  NOTIFY_POLL_MS: '100',
};

interface Child {
  proc: ChildProcess;
  url: string;
  log: string[];
}

async function startChild(database: string): Promise<Child> {
  const proc = spawn(
    process.execPath,
    ['bin/gateway.js', 'serve', '--database', database, '--port', '0', '--host', '127.0.0.1'],
    {
      cwd: ROOT,
      env: { ...process.env, ...ENV },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const log: string[] = [];
  proc.stderr.on('data', (d: Buffer) => log.push(d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start within 20 s:\n${log.join('\n')}`)), 20_000);
    proc.once('exit', (code) => reject(new Error(`gateway exited with ${code}:\n${log.join('\n')}`)));
    createInterface({ input: proc.stdout }).on('line', (line) => {
      log.push(line);
      if (!line.includes('"gateway ready"')) return;
      clearTimeout(timer);
      resolve((JSON.parse(line) as { publicUrl: string }).publicUrl.replace('localhost', '127.0.0.1'));
    });
  });
  return { proc, url, log };
}

async function kill9(child: Child): Promise<void> {
  if (child.proc.exitCode !== null || child.proc.signalCode !== null) return;
  const exited = new Promise((resolve) => child.proc.once('exit', resolve));
  child.proc.kill('SIGKILL');
  await exited;
}

async function stop(child: Child): Promise<void> {
  if (child.proc.exitCode !== null || child.proc.signalCode !== null) return;
  const exited = new Promise((resolve) => child.proc.once('exit', resolve));
  child.proc.kill('SIGTERM');
  await exited;
}

describe('a gateway killed mid-delivery and restarted on the same SQLite file', () => {
  let dir: string;
  let database: string;
  let merchant: MerchantCredentials;
  let rx: Receiver;
  const children: Child[] = [];
  const orders: string[] = [];

  beforeAll(async () => {
    if (!existsSync(join(ROOT, 'dist/src/notify/worker.js')))
      throw new Error('run `npm run build` first: this test starts bin/gateway.js');
    dir = mkdtempSync(join(tmpdir(), 'gw-crash-'));
    database = join(dir, 'gateway.db');
    const store = await openStore(database);
    merchant = await createMerchant(store, { name: 'Crash Merchant', currency: 'NZD' });
    await store.close();
    rx = await Receiver.start();
  });
  afterAll(async () => {
    for (const c of children) await kill9(c);
    await rx?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function payOrders(child: Child, n: number): Promise<void> {
    for (let i = 0; i < n; i++) {
      const body: Record<string, string> = {
        user_id: merchant.user_id,
        wallet_id: merchant.wallet_id,
        payment_method: 'alipay',
        amount: '10.00',
        return_url: 'https://merchant.example/return',
        callback_url: `${rx.url}/notify`,
        merchant_reference: `crash-${orders.length}`,
        ip: '122.122.122.1',
        version: '2.0',
        product_name: 'Crash test',
      };
      body.signature = signRequest(body, merchant.api_key);
      const created = await (
        await fetch(`${child.url}/v2/transaction`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        })
      ).json();
      expect(created.code).toBe(0);
      const row = readDb((db) =>
        db.prepare('select order_id from transactions where merchant_reference = ?').get(body.merchant_reference),
      ) as { order_id: string };
      const paid = await (
        await fetch(`${child.url}/sandbox/pay/${row.order_id}`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
          body: 'result=paid',
        })
      ).json();
      expect(paid).toMatchObject({ code: 0, status: 'paid' });
      orders.push(row.order_id);
    }
  }

  function readDb<T>(fn: (db: BetterSqlite3.Database) => T): T {
    const db = new BetterSqlite3(database, { readonly: true, fileMustExist: true });
    try {
      db.pragma('busy_timeout = 5000');
      return fn(db);
    } finally {
      db.close();
    }
  }

  const seenRefs = (pred: (r: Received) => boolean) =>
    new Set(rx.received.filter(pred).map((r) => r.fields.get('merchant_reference')));

  it(
    'loses no notification and marks none delivered that the receiver did not acknowledge',
    { timeout: 120_000 },
    async () => {
      // 1. The merchant hangs: kill the gateway while attempts are open.
      rx.fallback = 'hang';
      const a = await startChild(database);
      children.push(a);
      await payOrders(a, 6);
      await rx.waitFor(() => rx.openNow >= 4, 'attempts hanging at the receiver', 20_000);
      await kill9(a);
      rx.releaseHanging();

      // 2. The merchant answers 500: kill again between retries.
      rx.fallback = { status: 500, body: 'down for maintenance' };
      const b = await startChild(database);
      children.push(b);
      await payOrders(b, 4);
      await rx.waitFor(
        () => seenRefs((r) => r.answered?.startsWith('500') ?? false).size >= 8,
        'failed attempts for most orders',
        20_000,
      );
      await kill9(b);

      // 3. The merchant acknowledges, slowly: kill while some are acknowledged and others in flight.
      rx.fallback = { status: 200, body: 'sent', delayMs: 300 };
      const c = await startChild(database);
      children.push(c);
      await payOrders(c, 4);
      await rx.waitFor(
        (rs) => rs.some((r) => r.answered === 'sent') && rx.openNow > 0,
        'some acknowledged, some in flight',
        20_000,
      );
      await kill9(c);

      // 4. Restart with a healthy merchant: everything arrives.
      rx.fallback = 'sent';
      const d = await startChild(database);
      children.push(d);
      await vi.waitFor(
        () => {
          const pending = readDb((db) =>
            db.prepare("select count(*) as n from outbox where delivery_status != 'delivered'").get(),
          ) as { n: number };
          expect(pending.n).toBe(0);
        },
        { timeout: 30_000, interval: 200 },
      );
      await stop(d);

      const rows = readDb((db) =>
        db.prepare('select event_id, order_id, delivery_status, attempts from outbox').all(),
      ) as Array<{ event_id: string; order_id: string; delivery_status: string; attempts: number }>;
      const attempts = readDb((db) =>
        db
          .prepare(
            'select event_id, http_status, response_excerpt, error from notification_attempts order by attempt_id',
          )
          .all(),
      ) as Array<{
        event_id: string;
        http_status: number | null;
        response_excerpt: string | null;
        error: string | null;
      }>;

      // Nothing lost: one notification per paid order, all delivered.
      expect(orders).toHaveLength(14);
      expect(rows.map((r) => r.order_id).sort()).toEqual([...orders].sort());
      expect(rows.every((r) => r.delivery_status === 'delivered')).toBe(true);

      for (const row of rows) {
        const acknowledged = rx.byEvent(row.event_id).filter((r) => r.answered === 'sent');
        // Nothing marked delivered without the receiver having answered `sent` for that event...
        expect(acknowledged.length, row.event_id).toBeGreaterThanOrEqual(1);
        // ...and every attempt the gateway recorded as acknowledged matches one the receiver gave.
        const recordedOk = attempts.filter((x) => x.event_id === row.event_id && x.error === null);
        expect(recordedOk.length).toBeGreaterThanOrEqual(1);
        expect(recordedOk.every((x) => x.http_status === 200 && x.response_excerpt === 'sent')).toBe(true);
        expect(recordedOk.length).toBeLessThanOrEqual(acknowledged.length);
        // Attempts recorded never exceed requests the receiver saw (a killed gateway may record fewer).
        expect(attempts.filter((x) => x.event_id === row.event_id).length).toBeLessThanOrEqual(
          rx.byEvent(row.event_id).length,
        );
      }
      // The receiver saw only these events: nothing invented.
      const known = new Set(rows.map((r) => r.event_id));
      expect(rx.received.every((r) => known.has(String(r.headers['webhook-id'])))).toBe(true);
    },
  );
});

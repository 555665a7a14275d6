// Two gateway processes (`gateway serve`, as deployed) on one PostgreSQL database, with a real
// merchant notification receiver. Payments go through both; then one instance is killed with
// SIGKILL while its deliveries hang at the receiver, and the survivor must deliver them once the
// dead instance's leases expire. Needs `npm run build` (npm test runs it first).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { signRequest } from '../../sdk/signing.js';
import { createMerchant, type MerchantCredentials } from '../../src/cli/admin.js';
import { openStore } from '../../src/store/open.js';
import { createTestDatabase } from '../support/pg-db.js';
import { uniqueRef } from '../support/gateway.js';
import { freePort } from '../support/ports.js';
import { pgQuery, until } from './pair.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const LEASE_MS = 4_000;
/** Short settings so that a dead instance's claims expire within seconds. */
const NOTIFY_ENV = {
  NOTIFY_LEASE_MS: String(LEASE_MS),
  NOTIFY_TIMEOUT_MS: '2000',
  NOTIFY_RETRY_SCHEDULE_MS: '300',
  NOTIFY_POLL_MS: '200',
};

interface Instance {
  name: string;
  child: ChildProcess;
  url: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output: string[];
}

async function startInstance(name: string, database: string, publicUrl: string, port: number): Promise<Instance> {
  const child = spawn(process.execPath, ['bin/gateway.js', 'serve'], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: database,
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_URL: publicUrl,
      GATEWAY_MODE: 'sandbox',
      LOG_LEVEL: 'warn',
      ...NOTIFY_ENV,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const keep = (b: Buffer) => {
    output.push(b.toString());
    if (output.length > 200) output.shift();
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const url = `http://127.0.0.1:${port}`;
  let gone = false;
  void exited.then(() => (gone = true));
  await until(
    `${name} to answer /healthz`,
    async () => {
      if (gone) throw new Error(`${name} exited during start:\n${output.join('')}`);
      return fetch(`${url}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
    },
    30_000,
  );
  return { name, child, url, exited, output };
}

/** A merchant's notification endpoint: answers `sent`, or holds every request open while `hang` is set. */
function startReceiver() {
  const received: { ref: string; status: string }[] = [];
  const acknowledged: { ref: string; status: string }[] = [];
  const held = new Set<ServerResponse>();
  const state = { hang: false };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const form = new URLSearchParams(Buffer.concat(chunks).toString());
      const n = { ref: form.get('merchant_reference') ?? '', status: form.get('status') ?? '' };
      received.push(n);
      if (state.hang) {
        held.add(res);
        res.on('close', () => held.delete(res));
        return;
      }
      acknowledged.push(n);
      res.writeHead(200, { 'content-type': 'text/plain' }).end('sent');
    });
  });
  return {
    received,
    acknowledged,
    held,
    state,
    async listen(): Promise<string> {
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      return `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/notify`;
    },
    close() {
      server.closeAllConnections();
      server.close();
    },
  };
}

describe('two gateway processes on one PostgreSQL database', () => {
  let database: string;
  let merchant: MerchantCredentials;
  let a: Instance;
  let b: Instance;
  let receiver: ReturnType<typeof startReceiver>;
  let callbackUrl: string;

  beforeAll(async () => {
    if (!existsSync(`${ROOT}/dist/src/cli/main.js`))
      throw new Error('dist/ is missing: run `npm run build` first (npm test does)');
    database = await createTestDatabase(inject('pgUrl'));
    receiver = startReceiver();
    callbackUrl = await receiver.listen();
    const [portA, portB] = [await freePort(), await freePort()];
    // One PUBLIC_URL for all instances, as behind a load balancer; both migrate the empty database at once.
    [a, b] = await Promise.all([
      startInstance('a', database, `http://127.0.0.1:${portA}`, portA),
      startInstance('b', database, `http://127.0.0.1:${portA}`, portB),
    ]);
    const store = await openStore(database);
    try {
      merchant = await createMerchant(store, { name: 'Two Instances', currency: 'NZD' });
    } finally {
      await store.close();
    }
  }, 60_000);

  afterAll(async () => {
    for (const i of [a, b]) if (i && i.child.exitCode === null && i.child.signalCode === null) i.child.kill('SIGKILL');
    receiver?.close();
  });

  async function post(gw: Instance, path: string, body: Record<string, string>, form = false): Promise<any> {
    const res = await fetch(gw.url + path, {
      method: 'POST',
      headers: form
        ? { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }
        : { 'content-type': 'application/json;charset=UTF-8' },
      body: form ? new URLSearchParams(body).toString() : JSON.stringify(body),
    });
    return res.json();
  }

  async function query(gw: Instance, merchant_reference: string): Promise<any> {
    const params = { merchant_reference, user_id: merchant.user_id };
    const qs = new URLSearchParams({ user_id: merchant.user_id, signature: signRequest(params, merchant.api_key) });
    return (await fetch(`${gw.url}/v2/transaction/${merchant_reference}?${qs}`)).json();
  }

  /** Creates an order on one instance and pays it on another; returns its merchant_reference and order_id. */
  async function payment(createOn: Instance, payOn: Instance, status: 'paid' | 'failed' = 'paid') {
    const body: Record<string, string> = {
      user_id: merchant.user_id,
      wallet_id: merchant.wallet_id,
      payment_method: 'alipay',
      amount: '12.30',
      return_url: 'https://merchant.example/return',
      callback_url: callbackUrl,
      merchant_reference: uniqueRef('two'),
      ip: '122.122.122.1',
      version: '2.0',
      product_name: 'Two instances',
    };
    const created = await post(createOn, '/v2/transaction', {
      ...body,
      signature: signRequest(body, merchant.api_key),
    });
    expect(created.code, JSON.stringify(created)).toBe(0);
    const { order_id } = await query(payOn, body.merchant_reference);
    expect(await post(payOn, `/sandbox/pay/${order_id}`, { result: status }, true)).toMatchObject({ code: 0, status });
    return { ref: body.merchant_reference, order_id: order_id as string, status };
  }

  it('delivers every notification exactly once in normal operation, whichever instance settled it', async () => {
    const paid = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? payment(a, b, i % 4 === 1 ? 'failed' : 'paid') : payment(b, a))),
    );
    const refs = new Set(paid.map((p) => p.ref));
    await until(
      '20 acknowledged notifications',
      () => new Set(receiver.acknowledged.filter((n) => refs.has(n.ref)).map((n) => n.ref)).size === 20,
      30_000,
    );
    // Long enough for any claim to expire and be (wrongly) taken again.
    await new Promise((r) => setTimeout(r, LEASE_MS + 500));

    const got = receiver.received.filter((n) => refs.has(n.ref));
    expect(got).toHaveLength(20);
    for (const p of paid) expect(got.filter((n) => n.ref === p.ref)).toEqual([{ ref: p.ref, status: p.status }]);
    const rows = await pgQuery(
      database,
      `select o.delivery_status, o.attempts, (select count(*)::int from notification_attempts n where n.event_id = o.event_id) as tries
         from outbox o where o.order_id = any($1)`,
      [paid.map((p) => p.order_id)],
    );
    expect(rows).toHaveLength(20);
    for (const r of rows) expect(r).toEqual({ delivery_status: 'delivered', attempts: 1, tries: 1 });
  });

  it('after one instance is killed mid-delivery, the survivor delivers everything', async () => {
    receiver.state.hang = true;
    const before = receiver.received.length;
    const paid = await Promise.all(Array.from({ length: 10 }, () => payment(a, a)));
    const refs = new Set(paid.map((p) => p.ref));
    const aPid = a.child.pid!;
    const claimedByA = async () =>
      pgQuery<{ event_id: string; claimed_until: number }>(
        database,
        "select event_id, claimed_until from outbox where order_id = any($1) and claimed_by like $2 and claimed_until > $3 and delivery_status = 'pending'",
        [paid.map((p) => p.order_id), `%:${aPid}:%`, Date.now()],
      );
    let inFlight: { event_id: string; claimed_until: number }[] = [];
    await until(
      'instance a to hold claims while the receiver hangs',
      async () => {
        inFlight = await claimedByA();
        return inFlight.length > 0 && receiver.received.length > before;
      },
      20_000,
    );

    a.child.kill('SIGKILL');
    expect(await a.exited).toMatchObject({ signal: 'SIGKILL' });
    for (const res of receiver.held) res.destroy();
    receiver.state.hang = false;

    await until(
      'all 10 notifications acknowledged by the receiver',
      () => new Set(receiver.acknowledged.filter((n) => refs.has(n.ref)).map((n) => n.ref)).size === 10,
      60_000,
    );
    // The receiver's `sent` reaches the instance a moment before the instance records it.
    let rows: Record<string, any>[] = [];
    await until(
      'all 10 outbox rows recorded as delivered',
      async () => {
        rows = await pgQuery(
          database,
          'select event_id, delivery_status, delivered_at from outbox where order_id = any($1)',
          [paid.map((p) => p.order_id)],
        );
        return rows.length === 10 && rows.every((r) => r.delivery_status === 'delivered');
      },
      10_000,
    );
    // The rows the dead instance held were taken over once their lease ran out, not lost.
    const deliveredAt = new Map(rows.map((r) => [r.event_id, r.delivered_at as number]));
    const takenOver = inFlight.filter((r) => deliveredAt.get(r.event_id)! >= r.claimed_until);
    expect(takenOver.length).toBeGreaterThan(0);
    console.log(
      `killed with ${inFlight.length} claims in flight; ${takenOver.length} delivered by the survivor after their lease expired`,
    );
    for (const p of paid) expect(await query(b, p.ref)).toMatchObject({ code: 0, status: 'paid' });
  });

  it('the survivor stops cleanly on SIGTERM', async () => {
    b.child.kill('SIGTERM');
    expect(await b.exited).toEqual({ code: 0, signal: null });
  });
});

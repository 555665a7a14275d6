// Long polls wake when the order settles on another instance (LISTEN/NOTIFY), and the listener
// survives a lost connection without missing a change.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signRequest } from '../../sdk/signing.js';
import { PgStatusSignals } from '../../src/signals/pg-status-signals.js';
import { DEFAULT_CONFIG, SILENT_LOG, type GatewayContext } from '../../src/usecases/context.js';
import { CredentialCache } from '../../src/usecases/credentials.js';
import { waitForChange } from '../../src/usecases/query-transaction.js';
import type { Transaction } from '../../src/domain/transaction.js';
import { pgQuery, startPair, until, type GatewayPair } from './pair.js';

const LONG_POLL_MS = 20_000;

/**
 * The answer, if it comes within a quarter of the long-poll time. A long poll that is never
 * signalled still answers with the settled order, but only when it times out: an answer this early
 * shows that the signal crossed.
 */
function signalled<T>(answer: Promise<T>, ms = LONG_POLL_MS / 4): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms: the status change was not signalled`)), ms);
  });
  return Promise.race([answer, late]).finally(() => clearTimeout(timer));
}

let pair: GatewayPair;
beforeAll(async () => {
  pair = await startPair({ longPollTimeoutMs: LONG_POLL_MS });
});
afterAll(async () => pair?.close());

describe('long polling across two instances on PostgreSQL', () => {
  it('a long poll on one instance wakes when the payment settles on the other', async () => {
    const { a, b } = pair;
    const { merchant_reference, order_id } = await a.create({}, a.merchant);
    const started = Date.now();
    const polled = a.query(merchant_reference, { block: true, merchant: a.merchant });
    await until('the long poll to wait on a', () => a.ctx.signals.waiting > 0);
    const paidAt = Date.now();
    expect(await b.pay(order_id)).toMatchObject({ code: 0, status: 'paid' });
    const reply = await signalled(polled);
    expect(reply).toMatchObject({ code: 0, status: 'paid', order_id });
    console.log(`cross-instance wake: ${Date.now() - paidAt} ms after paying (poll held ${paidAt - started} ms)`);
  });

  it('a cancel on the first instance wakes a long poll on the second', async () => {
    const { a, b } = pair;
    const { merchant_reference } = await a.create({ host_type: '1' }, a.merchant);
    const polled = b.query(merchant_reference, { block: true, merchant: a.merchant });
    await until('the long poll to wait on b', () => b.ctx.signals.waiting > 0);
    const body = { user_id: a.merchant.user_id, merchant_reference };
    expect(await a.post('/cancel', { ...body, signature: signRequest(body, a.merchant.api_key) })).toMatchObject({
      code: 0,
    });
    expect(await signalled(polled)).toMatchObject({ code: 0, status: 'canceled' });
  });

  it("the hosted page's live status on one instance wakes when the payment settles on the other", async () => {
    const { a, b } = pair;
    const { reply, order_id } = await a.create({}, a.merchant);
    const page = await fetch(`${reply.host_url}/${reply.nonce}`);
    expect(page.status).toBe(200);
    const cookie = page.headers.get('set-cookie')!.split(';')[0];
    // The browser's next request may reach the other instance: the visit is in the database.
    const status = fetch(`${b.url}/v2/checkout/${reply.nonce}/status?wait=1`, { headers: { cookie } }).then((r) =>
      r.json(),
    );
    await until('the live status to wait on b', () => b.ctx.signals.waiting > 0);
    expect(await a.pay(order_id)).toMatchObject({ status: 'paid' });
    expect(await signalled(status)).toMatchObject({ status: 'paid' });
  });

  it('many long polls of many orders on both instances all wake', async () => {
    const { a, b } = pair;
    const orders = await Promise.all(Array.from({ length: 20 }, () => a.create({}, a.merchant)));
    const polls = orders.flatMap((o) =>
      [a, b].map((gw) => gw.query(o.merchant_reference, { block: true, merchant: a.merchant })),
    );
    await until('40 long polls to wait', () => a.ctx.signals.waiting + b.ctx.signals.waiting >= 40);
    await Promise.all(orders.map((o, i) => (i % 2 ? a : b).pay(o.order_id, i % 3 ? 'paid' : 'failed')));
    const replies = await signalled(Promise.all(polls));
    replies.forEach((r, i) => expect(r.status).toBe(Math.floor(i / 2) % 3 ? 'paid' : 'failed'));
  });
});

/** A TCP proxy in front of PostgreSQL that can cut, refuse or freeze the listener's connection. */
function startProxy(target: URL) {
  const links = new Set<{ client: net.Socket; upstream: net.Socket; frozen: boolean }>();
  let accepting = true;
  const server = net.createServer((client) => {
    if (!accepting) {
      client.destroy();
      return;
    }
    const upstream = net.connect(Number(target.port), target.hostname);
    const link = { client, upstream, frozen: false };
    links.add(link);
    client.on('data', (d) => void (link.frozen || upstream.write(d)));
    upstream.on('data', (d) => void (link.frozen || client.write(d)));
    const drop = () => {
      links.delete(link);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', drop).on('error', drop);
    upstream.on('close', drop).on('error', drop);
  });
  return {
    async listen(): Promise<number> {
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      return (server.address() as net.AddressInfo).port;
    },
    set accepting(v: boolean) {
      accepting = v;
    },
    cutAll() {
      for (const l of links) l.client.destroy();
    },
    /** Stops forwarding without closing: a half-open connection that never reports an error. */
    freezeAll() {
      for (const l of links) l.frozen = true;
    },
    close() {
      for (const l of links) l.client.destroy();
      server.close();
    },
  };
}

describe('the status listener connection', () => {
  let proxy: ReturnType<typeof startProxy>;
  let signals: PgStatusSignals;
  let ctx: GatewayContext;

  beforeAll(async () => {
    const target = new URL(pair.database);
    proxy = startProxy(target);
    const via = new URL(pair.database);
    via.host = `127.0.0.1:${await proxy.listen()}`;
    signals = new PgStatusSignals([via.toString()], {
      minBackoffMs: 50,
      maxBackoffMs: 200,
      pingIntervalMs: 200,
      pingTimeoutMs: 400,
    });
    await signals.start();
    ctx = {
      store: pair.a.store,
      credentials: new CredentialCache(pair.a.store.accounts, 0),
      signals,
      connectors: undefined as never,
      config: { ...DEFAULT_CONFIG, publicUrl: '' },
      log: SILENT_LOG,
      now: () => Date.now(),
    };
  });
  afterAll(async () => {
    await signals?.close();
    proxy?.close();
  });

  async function pendingOrder(): Promise<Transaction> {
    const { order_id } = await pair.a.create({}, pair.a.merchant);
    return (await pair.a.store.transactions.find(order_id))!;
  }

  it('a change made while the listener was disconnected is seen after it reconnects', async () => {
    const order = await pendingOrder();
    const connections = signals.connections;
    let settled = false;
    const waited = waitForChange(ctx, order, undefined, LONG_POLL_MS).then((t) => {
      settled = true;
      return t;
    });
    await until('the waiter', () => signals.waiting > 0);

    proxy.accepting = false;
    proxy.cutAll();
    await until('the listener to notice the cut', () => !signals.listening);
    // Its NOTIFY goes nowhere: nobody listens through the proxy now.
    expect(await pair.b.pay(order.order_id)).toMatchObject({ status: 'paid' });
    await new Promise((r) => setTimeout(r, 300)); // a few refused reconnect attempts
    expect(settled).toBe(false);

    proxy.accepting = true;
    expect((await waited).status).toBe('paid');
    expect(signals.connections).toBe(connections + 1);
    expect(signals.listening).toBe(true);
  });

  it('a connection that stops answering is replaced, and signals flow again', async () => {
    const order = await pendingOrder();
    const connections = signals.connections;
    const waited = waitForChange(ctx, order, undefined, LONG_POLL_MS);
    await until('the waiter', () => signals.waiting > 0);
    proxy.freezeAll();
    await until('a new listener connection', () => signals.connections === connections + 1 && signals.listening);
    await until('the waiter to re-read and wait again', () => signals.waiting > 0);
    await pair.b.pay(order.order_id);
    expect((await signalled(waited)).status).toBe('paid');
  });

  it('after a restart-like termination of the backend the gateway listeners reconnect', async () => {
    const { a, b } = pair;
    const before = [a, b].map((gw) => (gw.ctx.signals as PgStatusSignals).connections);
    const killed = await pgQuery(
      pair.database,
      "select pg_terminate_backend(pid) as ok from pg_stat_activity where application_name = 'gateway-status-listener' and datname = current_database()",
    );
    expect(killed.length).toBeGreaterThanOrEqual(2);
    await until('both gateway listeners to reconnect', () =>
      [a, b].every(
        (gw, i) =>
          (gw.ctx.signals as PgStatusSignals).connections > before[i] && (gw.ctx.signals as PgStatusSignals).listening,
      ),
    );
    const { merchant_reference, order_id } = await a.create({}, a.merchant);
    const polled = a.query(merchant_reference, { block: true, merchant: a.merchant });
    await until('the long poll', () => a.ctx.signals.waiting > 0);
    await b.pay(order_id);
    expect(await signalled(polled)).toMatchObject({ status: 'paid' });
  });
});

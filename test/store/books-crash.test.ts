// The books survive kill -9 (issue 40), on both engines: a gateway killed outright while orders are
// paid and refunded, and a payout script killed outright while it requests, approves, batches and
// marks payouts, leave sound books after a restart: `gateway ledger check` clean (every entry
// balanced, every balance its lines' sum, every paid order, refund and payout with the entries of
// its states), nothing posted twice (an entry's key is unique), no balance below zero.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { signRequest } from '../../sdk/signing.js';
import { openStore } from '../../src/store/open.js';
import { gatewayCli } from '../support/cli.js';
import { ENGINES } from '../support/gateway.js';
import { createTestDatabase } from '../support/pg-db.js';
import { freePort } from '../support/ports.js';
import { ROOT, exited, requireBuiltCli, serveProcess } from '../support/serve-process.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(ENGINES)('the books after kill -9 (%s)', (engine) => {
  let database: string;
  let merchant: { user_id: string; wallet_id: string; api_key: string };
  const children: ChildProcess[] = [];
  const cli = async (...args: string[]) => {
    const r = await gatewayCli([...args, '--json', '--database', database]);
    if (r.code !== 0) throw new Error(`gateway ${args.join(' ')}: ${r.stderr}`);
    return JSON.parse(r.stdout) as Record<string, string>;
  };

  beforeAll(async () => {
    requireBuiltCli();
    const dir = mkdtempSync(join(tmpdir(), 'gw-books-crash-'));
    database = engine === 'postgres' ? await createTestDatabase(inject('pgUrl')) : join(dir, 'gateway.db');
    merchant = (await cli('merchant', 'create', '--name', 'Crash books', '--currency', 'NZD')) as typeof merchant;
    await cli('settlement', 'set', '--wallet-id', merchant.wallet_id, '--delay-days', '0');
    const account = await cli(
      'bank-account',
      'add',
      '--wallet-id',
      merchant.wallet_id,
      '--holder',
      'Crash Cafe',
      '--nz-account',
      '01-0902-0068389-00',
    );
    await cli('bank-account', 'verify', '--id', account.id);
  });
  afterAll(() => {
    for (const c of children) c.kill('SIGKILL');
  });

  async function serve(): Promise<{ url: string; child: ChildProcess }> {
    const port = await freePort();
    const child = await serveProcess(database, port, { GATEWAY_MODE: 'sandbox' });
    children.push(child);
    return { url: `http://127.0.0.1:${port}`, child };
  }

  const post = async (url: string, path: string, body: Record<string, string>, form = false) =>
    (await (
      await fetch(url + path, {
        method: 'POST',
        headers: form
          ? { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }
          : { 'content-type': 'application/json' },
        body: form ? new URLSearchParams(body).toString() : JSON.stringify(body),
      })
    ).json()) as { code: number; status?: string };

  async function paidOrder(url: string, ref: string): Promise<string | undefined> {
    const body: Record<string, string> = {
      user_id: merchant.user_id,
      wallet_id: merchant.wallet_id,
      payment_method: 'alipay',
      amount: '10.00',
      return_url: 'https://merchant.example/return',
      callback_url: 'https://merchant.example/notify',
      merchant_reference: ref,
      ip: '122.122.122.1',
      version: '2.0',
      product_name: 'Crash books',
    };
    body.signature = signRequest(body, merchant.api_key);
    const created = await post(url, '/v2/transaction', body);
    if (created.code !== 0) return undefined;
    const store = await openStore(database);
    try {
      const order = await store.transactions.findByReference(merchant.user_id, ref);
      if (!order) return undefined;
      await post(url, `/sandbox/pay/${order.order_id}`, { result: 'paid' }, true);
      return order.order_id;
    } finally {
      await store.close();
    }
  }

  /** Payout requests, approvals, batches and paid marks in a loop, in a process of its own. */
  function payoutScript(): ChildProcess {
    const script = `
      const { openStore } = await import(${JSON.stringify(join(ROOT, 'dist/src/store/open.js'))});
      const p = await import(${JSON.stringify(join(ROOT, 'dist/src/usecases/payouts.js'))});
      const b = await import(${JSON.stringify(join(ROOT, 'dist/src/usecases/books.js'))});
      const store = await openStore(${JSON.stringify(database)});
      const settings = { nz: { account: '38-9016-0704505-00', name: 'Crash Payments' } };
      for (let i = 0; ; i++) {
        await b.runSettlement(store, Date.now());
        try {
          const payout = await p.requestPayout(store, { wallet_id: ${JSON.stringify(merchant.wallet_id)}, amount: '1.00', by: 'crash', now: Date.now() });
          await p.movePayout(store, payout.payout_id, i % 5 === 0 ? 'canceled' : 'approved', 'crash', Date.now());
          process.stdout.write('payout\\n');
        } catch {}
        if (i % 3 === 0) {
          const file = await p.batchPayouts(store, { currency: 'NZD', settings, by: 'crash', now: Date.now() });
          for (const [j, x] of (file?.payouts ?? []).entries())
            await p.movePayout(store, x.payout_id, j % 4 === 0 ? 'returned' : 'paid', 'crash', Date.now(), 'closed');
        }
      }`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    children.push(child);
    return child;
  }

  it('leaves sound books, with nothing posted twice', { timeout: 120_000 }, async () => {
    const first = await serve();
    const paid: string[] = [];
    for (let i = 0; i < 20; i++) {
      const id = await paidOrder(first.url, `before-${i}`);
      if (id) paid.push(id);
    }
    expect(paid).toHaveLength(20);
    await cli('settlement', 'run');
    // Payments and refunds at once, the gateway killed outright in the middle.
    const refunds = paid.map((order_id, i) => {
      const body: Record<string, string> = {
        user_id: merchant.user_id,
        order_id,
        refund_amount: '4.00',
        reference: `r${i}`,
      };
      body.signature = signRequest(body, merchant.api_key);
      return post(first.url, '/refund', body).catch(() => ({ code: -1 }));
    });
    const more = Array.from({ length: 20 }, (_, i) => paidOrder(first.url, `during-${i}`).catch(() => undefined));
    await sleep(engine === 'postgres' ? 1200 : 800);
    first.child.kill('SIGKILL');
    await Promise.all([exited(first.child), ...refunds, ...more]);
    // Payouts requested, approved, batched and marked, the script killed outright in the middle (on
    // its own: a SQLite database belongs to one process at a time).
    const script = payoutScript();
    // Killed a while after its first payout, not at a fixed time: on a loaded machine its start-up
    // alone (the imports, the store) can take seconds.
    await new Promise<void>((resolve) => {
      const give = setTimeout(resolve, 30_000);
      script.stdout!.once('data', () => {
        clearTimeout(give);
        resolve();
      });
    });
    await sleep(1500);
    script.kill('SIGKILL');
    await exited(script);

    // After a restart (which resumes the refunds a crash left pending), the books are sound.
    const second = await serve();
    await sleep(500);
    const store = await openStore(database);
    try {
      const check = await store.ledger.check();
      expect(check.problems).toEqual([]);
      const balances = await store.ledger.walletBalances(merchant.wallet_id, 'NZD');
      for (const b of ['pending', 'available', 'reserved'] as const) expect(balances[b]).toBeGreaterThanOrEqual(0);
      // The payout script got somewhere, and so did the refunds.
      expect((await store.payouts.list({ wallet_id: merchant.wallet_id })).length).toBeGreaterThan(0);
      expect(check.entries).toBeGreaterThan(40);
    } finally {
      await store.close();
      second.child.kill('SIGKILL');
      await exited(second.child);
    }
    const cliCheck = await gatewayCli(['ledger', 'check', '--database', database]);
    expect(cliCheck.code, cliCheck.stdout).toBe(0);
  });
});

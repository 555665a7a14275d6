// A live gateway killed outright (SIGKILL) while merchant-hosted creates go through the fake Alipay
// and the fake WeChat Pay and customers pay them: after a restart every create it acknowledged is
// there with its QR, and every payment the customer made is settled and notified to the merchant,
// once the provider sends again the notifications the dead gateway did not take (as both do, for
// about a day).
import { execFile, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { signRequest } from '../../sdk/signing.js';
import { buildConnectors } from '../../src/connectors/registry.js';
import { parseMasterKey } from '../../src/domain/sealed.js';
import { openStore } from '../../src/store/open.js';
import { setChannelAccount } from '../../src/usecases/channel-accounts.js';
import { Receiver } from '../notify/receiver.js';
import { alipayAccount, wechatpayAccount } from '../support/channels.js';
import { FakeAlipay } from '../support/fake-alipay.js';
import { FakeWechatPay } from '../support/fake-wechatpay.js';
import { ENGINES } from '../support/gateway.js';
import { createTestDatabase } from '../support/pg-db.js';
import { freePort } from '../support/ports.js';
import { BIN, ROOT, exited, requireBuiltCli, serveProcess } from '../support/serve-process.js';
import { until } from '../support/wait.js';

const ACKNOWLEDGED_BEFORE_KILL = 120;
/** The description a WeChat Pay order was opened with (the fake keeps the request's JSON). */
const descriptionOf = (body: string) => (JSON.parse(body) as { description?: string }).description;

describe.each(ENGINES)('a live gateway killed mid-load loses no payment (%s)', (engine) => {
  const masterKey = randomBytes(32).toString('base64');
  let dir: string;
  let database: string;
  let merchant: { user_id: string; wallet_id: string; api_key: string };
  let alipay: FakeAlipay;
  let wechatpay: FakeWechatPay;
  let rx: Receiver;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    requireBuiltCli();
    dir = mkdtempSync(join(tmpdir(), 'gw-crash-live-'));
    database = engine === 'postgres' ? await createTestDatabase(inject('pgUrl')) : join(dir, 'gateway.db');
    [alipay, wechatpay, rx] = await Promise.all([FakeAlipay.start(), FakeWechatPay.start(), Receiver.start()]);
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [BIN, 'merchant', 'create', '--name', 'Crash', '--currency', 'NZD', '--json', '--database', database],
      { cwd: ROOT },
    );
    merchant = JSON.parse(stdout) as typeof merchant;
    // The account as `gateway channel set` stores it, sealed with the key the gateway is given.
    const store = await openStore(database);
    const built = buildConnectors({
      publicUrl: () => 'http://127.0.0.1',
      sandboxState: async () => undefined,
      timeoutMs: 2_000,
    });
    try {
      for (const account of [
        alipayAccount(merchant.wallet_id, alipay),
        wechatpayAccount(merchant.wallet_id, wechatpay),
      ]) {
        const set = await setChannelAccount(
          store.accounts,
          built.connectors,
          parseMasterKey(masterKey),
          account,
          Date.now(),
        );
        if (!set.ok) throw new Error(set.problems.join('; '));
      }
      // Domestic accounts charge CNY: the wallet's NZD at this rate.
      await store.accounts.setRate('NZD', 'CNY', 4_644_300, Date.now());
    } finally {
      await built.close();
      await store.close();
    }
  });
  afterAll(async () => {
    for (const c of children) c.kill('SIGKILL');
    await Promise.all([alipay?.close(), wechatpay?.close(), rx?.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    'every acknowledged create keeps its QR; every payment made settles and reaches the merchant (Alipay and WeChat Pay)',
    { timeout: 90_000 },
    async () => {
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      // On PostgreSQL a notification the killed instance had claimed is due again when its lease ends.
      const env = {
        GATEWAY_MODE: 'live',
        GATEWAY_MASTER_KEY: masterKey,
        PUBLIC_URL: url,
        NOTIFY_ENABLED: 'true',
        NOTIFY_ALLOW_CIDRS: '127.0.0.1/32',
        NOTIFY_TIMEOUT_MS: '2000',
        NOTIFY_LEASE_MS: '4000',
      };
      const first = await serveProcess(database, port, env);
      children.push(first);
      // Each provider's payments by out_trade_no: how the customer pays one, how the provider sends its
      // notification again, and whether one was taken.
      const providers = {
        alipay: {
          tradeOf: (ref: string) => [...alipay.trades.values()].find((t) => t.subject === ref)!.out_trade_no,
          pay: (o: string) => alipay.pay(o),
          notifyAgain: async (o: string) => (await alipay.notify(o)) === 'success',
          taken: (o: string) => alipay.notifications.some((n) => n.out_trade_no === o && n.answer === 'success'),
          refOf: (o: string) => alipay.trades.get(o)?.subject,
        },
        wechat: {
          tradeOf: (ref: string) =>
            [...wechatpay.orders.values()].find((o) => descriptionOf(o.body) === ref)!.out_trade_no,
          pay: (o: string) => wechatpay.pay(o),
          notifyAgain: async (o: string) => (await wechatpay.notify(o)) === 204,
          taken: (o: string) => wechatpay.notifications.some((n) => n.out_trade_no === o && n.status === 204),
          refOf: (o: string) => descriptionOf(wechatpay.orders.get(o)?.body ?? '{}'),
        },
      };
      type Method = keyof typeof providers;
      const acknowledged: string[] = [];
      const paid: Array<{ method: Method; out_trade_no: string }> = [];
      const refusals: string[] = [];
      let seq = 0;
      let killed = false;
      const loop = async (method: Method) => {
        while (!killed) {
          const merchant_reference = `live-crash-${++seq}`;
          const body: Record<string, string> = {
            user_id: merchant.user_id,
            wallet_id: merchant.wallet_id,
            payment_method: method,
            amount: '12.34',
            host_type: '1',
            return_url: 'https://merchant.example/r',
            callback_url: `${rx.url}/notify`,
            merchant_reference,
            ip: '122.122.122.1',
            version: '2.0',
            product_name: merchant_reference,
          };
          body.signature = signRequest(body, merchant.api_key);
          let answer: { code: number; message: string };
          try {
            answer = (await (
              await fetch(`${url}/v2/transaction`, {
                method: 'POST',
                headers: { 'content-type': 'application/json' },
                body: JSON.stringify(body),
              })
            ).json()) as typeof answer;
          } catch {
            return; // the connection died with the process
          }
          if (answer.code !== 0) {
            refusals.push(`${answer.code} ${answer.message}`);
            continue;
          }
          acknowledged.push(merchant_reference);
          if (acknowledged.length === ACKNOWLEDGED_BEFORE_KILL) first.kill('SIGKILL');
          // The customer scans the QR and pays at once; the notification may find the gateway gone.
          const out_trade_no = providers[method].tradeOf(merchant_reference);
          paid.push({ method, out_trade_no });
          await providers[method].pay(out_trade_no).catch(() => undefined);
        }
      };
      const loops = Array.from({ length: 12 }, (_, i) => loop(i % 2 ? 'alipay' : 'wechat'));
      await until(
        'the gateway to be killed',
        () => {
          if (refusals.length > 0 && !killed) throw new Error(`a create was refused: ${refusals[0]}`);
          return acknowledged.length >= ACKNOWLEDGED_BEFORE_KILL;
        },
        60_000,
      );
      killed = true;
      await Promise.all(loops);
      await exited(first);

      const second = await serveProcess(database, port, env);
      children.push(second);
      // The provider sends a notification again until it is taken.
      const untaken = paid.filter((p) => !providers[p.method].taken(p.out_trade_no));
      for (const p of untaken) expect([p, await providers[p.method].notifyAgain(p.out_trade_no)]).toEqual([p, true]);

      const store = await openStore(database);
      try {
        const orders = await store.db
          .selectFrom('transactions')
          .select(['merchant_reference', 'status', 'qr_code_url'])
          .where('user_id', '=', merchant.user_id)
          .execute();
        const byRef = new Map(orders.map((o) => [o.merchant_reference, o]));
        // Acknowledged, so there, with the QR the merchant was answered with; and paid, by one notification or the other.
        expect(acknowledged.filter((r) => !byRef.get(r)?.qr_code_url)).toEqual([]);
        expect(acknowledged.filter((r) => byRef.get(r)?.status !== 'paid')).toEqual([]);
        // Nothing was paid at the provider that the gateway does not know of.
        expect(paid.filter((p) => byRef.get(providers[p.method].refOf(p.out_trade_no)!)?.status !== 'paid')).toEqual(
          [],
        );
        // The books: every paid order's entry posted once, with its settle, whenever the kill came.
        expect((await store.ledger.check()).problems).toEqual([]);
      } finally {
        await store.close();
      }
      // Every paid order reached the merchant's receiver, whether settled before the kill or after it.
      const notified = () =>
        new Set(
          rx.received.filter((r) => r.fields.get('status') === 'paid').map((r) => r.fields.get('merchant_reference')),
        );
      await until('every paid order to be notified', () => acknowledged.every((r) => notified().has(r)), 30_000);
      expect(untaken.length).toBeGreaterThan(0);
      expect(new Set(paid.map((p) => p.method))).toEqual(new Set(['alipay', 'wechat']));
      second.kill('SIGTERM');
    },
  );
});

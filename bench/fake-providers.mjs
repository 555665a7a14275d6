// The fake providers of the tests (built to dist/test/support by bench/tsconfig.fakes.json), in
// their own process for the connector scenario. argv[2] is a JSON config: { delayMs, payAfterMs }.
// Every answer leaves `delayMs` after its request came (a provider far away); every payment opened
// is paid `payAfterMs` after its answer left (the customer scans, or pays at their bank) and
// notified to the gateway, and the notification's round trip is timed here, less the time the
// gateway's own calls about that payment spent here meanwhile (POLi's, CoinPayments', Azupay's and
// UnionPay's notifications are each checked with a call to the provider before they are answered).
//   -> { type: 'ready', accounts: { alipay, wechatpay, poli, coinpayments, azupay, unionpay } }
//        the channel accounts to set (keys included; wallet_id is the gateway's to fill in)
//   <- { type: 'notifications' } -> { type: 'notifications', [provider]: {latencies, failed, held} }  and reset
//      (held: [key, ms] of every opening, its request's arrival here to its answer's end. The key
//      is the order's description for Alipay and WeChat Pay (the bench names each order after its
//      merchant_reference), the out_trade_no for the others)
//   <- { type: 'bill', provider, date, file } -> { type: 'bill' }   the provider's statement of that day is the file (WeChat Pay)
//   <- { type: 'stop' }
import { readFileSync } from 'node:fs';
import {
  alipayAccount,
  azupayAccount,
  coinpaymentsAccount,
  poliAccount,
  unionpayAccount,
  wechatpayAccount,
} from '../dist/test/support/accounts.js';
import { FakeAlipay } from '../dist/test/support/fake-alipay.js';
import { FakeAzupay } from '../dist/test/support/fake-azupay.js';
import { FakeCoinPayments } from '../dist/test/support/fake-coinpayments.js';
import { FakePoli } from '../dist/test/support/fake-poli.js';
import { deliver } from '../dist/test/support/fake-server.js';
import { FakeUnionpay } from '../dist/test/support/fake-unionpay.js';
import { FakeWechatPay } from '../dist/test/support/fake-wechatpay.js';

const cfg = JSON.parse(process.argv[2] ?? '{}');
const [alipay, wechatpay, poli, coinpayments, azupay, unionpay] = await Promise.all([
  FakeAlipay.start(),
  FakeWechatPay.start(),
  FakePoli.start(),
  FakeCoinPayments.start(),
  FakeAzupay.start(),
  FakeUnionpay.start(),
]);
const fresh = () => ({ latencies: [], failed: 0, held: [], asked: new Map() });
const timed = Object.fromEntries(
  ['alipay', 'wechatpay', 'poli', 'coinpayments', 'azupay', 'unionpay'].map((n) => [n, fresh()]),
);

const json = (text) => JSON.parse(text ?? '{}');
const byReference = (out_trade_no) => out_trade_no;
/**
 * Per provider: the key its openings are reported by, how the customer pays (nothing sent), the
 * notification to send (made, and signed, before the clock starts: the provider's work), and
 * whether the gateway's answer acknowledges it.
 */
const providers = {
  alipay: {
    fake: alipay,
    key: (out_trade_no) => alipay.trades.get(out_trade_no)?.subject,
    pay: (ref) => alipay.pay(ref, { notify: false }),
    note: (ref) => {
      const fields = alipay.notificationFields(ref);
      return () => alipay.notify(ref, fields);
    },
    acknowledged: (answer) => answer === 'success',
  },
  wechatpay: {
    fake: wechatpay,
    key: (out_trade_no) => json(wechatpay.orders.get(out_trade_no)?.body).description,
    pay: (ref) => wechatpay.pay(ref, { notify: false }),
    note: (ref) => {
      const note = wechatpay.notification(ref);
      return () => wechatpay.notify(ref, note);
    },
    acknowledged: (status) => status === 200 || status === 204,
  },
  poli: {
    fake: poli,
    key: byReference,
    pay: (ref) => poli.finish(ref, 'Completed', { nudge: false }),
    note: (ref) => {
      const t = poli.byReference(ref);
      return () => poli.nudge(t.token);
    },
    acknowledged: (answer) => answer.status === 200,
  },
  coinpayments: {
    fake: coinpayments,
    key: byReference,
    pay: (ref) => coinpayments.settle(ref, 'completed', { notify: false }),
    note: (ref) => {
      const i = coinpayments.byReference(ref);
      const body = coinpayments.webhookBody(i);
      return () => coinpayments.webhook(i, { body });
    },
    acknowledged: (answer) => answer.status === 200,
  },
  azupay: {
    fake: azupay,
    key: byReference,
    pay: (ref) => azupay.pay(ref, { notify: false }),
    note: (ref) => {
      const r = azupay.byReference(ref);
      const body = JSON.stringify(azupay.record(r));
      return () => azupay.webhook(r, { body });
    },
    acknowledged: (answer) => answer.status === 200,
  },
  unionpay: {
    fake: unionpay,
    key: byReference,
    pay: (ref) => unionpay.pay(ref, { notify: false }),
    note: (ref) => {
      const c = unionpay.consumes.get(ref);
      const body = new URLSearchParams(unionpay.signed(unionpay.notificationFields(c))).toString();
      return () => deliver(c.backUrl, body, { 'content-type': 'application/x-www-form-urlencoded' });
    },
    acknowledged: (answer) => answer.status === 200,
  },
};

for (const [name, p] of Object.entries(providers)) {
  const t = () => timed[name];
  p.fake.answerDelayMs = cfg.delayMs ?? 0;
  p.fake.onHeld = (out_trade_no, ms) => t().held.push([p.key(out_trade_no), ms]);
  // By out_trade_no: [ms, ended at] of every call asking about the payment.
  p.fake.onAsked = (out_trade_no, ms) => {
    const calls = t().asked.get(out_trade_no) ?? [];
    calls.push([ms, performance.now()]);
    t().asked.set(out_trade_no, calls);
  };
  p.fake.onOpened = (out_trade_no) => {
    setTimeout(
      async () => {
        try {
          await p.pay(out_trade_no);
          const send = p.note(out_trade_no);
          const t0 = performance.now();
          const answer = await send();
          const t1 = performance.now();
          // The gateway's calls about this payment during the round trip were the provider's time, not the gateway's.
          const atProvider = (t().asked.get(out_trade_no) ?? [])
            .filter(([, ended]) => ended >= t0 && ended <= t1)
            .reduce((sum, [ms]) => sum + ms, 0);
          t().latencies.push(t1 - t0 - atProvider);
          if (!p.acknowledged(answer)) t().failed++;
        } catch {
          t().failed++;
        }
      },
      (cfg.delayMs ?? 0) + (cfg.payAfterMs ?? 50),
    );
  };
}

const wallet = '';
const accounts = {
  alipay: alipayAccount(wallet, alipay),
  wechatpay: wechatpayAccount(wallet, wechatpay),
  poli: poliAccount(wallet, poli),
  coinpayments: coinpaymentsAccount(wallet, coinpayments),
  azupay: azupayAccount(wallet, azupay),
  // Charged in the wallet's own currency, as the floor charges it.
  unionpay: unionpayAccount(wallet, unionpay, { currency_mode: 'cross-border', currency: 'NZD' }),
};
for (const a of Object.values(accounts)) delete a.wallet_id;

process.on('message', async (m) => {
  if (m?.type === 'notifications') {
    const shown = Object.entries(timed).map(([n, { latencies, failed, held }]) => [n, { latencies, failed, held }]);
    process.send({ type: 'notifications', ...Object.fromEntries(shown) });
    for (const n of Object.keys(timed)) timed[n] = fresh();
  } else if (m?.type === 'bill') {
    // { provider: 'wechatpay', date, file }: that day's bill is the file's text.
    providers[m.provider].fake.billFiles.set(m.date, readFileSync(m.file, 'utf8'));
    process.send({ type: 'bill' });
  } else if (m?.type === 'stop') {
    await Promise.all(Object.values(providers).map((p) => p.fake.close()));
    process.exit(0);
  }
});
process.send({ type: 'ready', accounts });

// The fake Alipay and fake WeChat Pay of the tests (built to dist/test/support by
// bench/tsconfig.fakes.json), in their own process for the connector scenario. argv[2] is a JSON
// config: { delayMs, payAfterMs }. Every answer leaves `delayMs` after its request came (a
// provider far away); every payment opened is paid `payAfterMs` after its answer left (the
// customer scans and pays) and notified to the gateway, and the notification's round trip is timed here.
//   -> { type: 'ready', accounts: { alipay, wechatpay } }   the channel accounts to set (keys included)
//   <- { type: 'notifications' } -> { type: 'notifications', alipay: {latencies, failed, held}, wechatpay: {...} }  and reset
//      (held: [description, ms] of every opening, its request's arrival here to its answer's end;
//      the bench names each order after its merchant_reference)
//   <- { type: 'stop' }
import { FakeAlipay } from '../dist/test/support/fake-alipay.js';
import { FakeWechatPay } from '../dist/test/support/fake-wechatpay.js';

const cfg = JSON.parse(process.argv[2] ?? '{}');
const [alipay, wechatpay] = await Promise.all([FakeAlipay.start(), FakeWechatPay.start()]);
const timed = { alipay: { latencies: [], failed: 0, held: [] }, wechatpay: { latencies: [], failed: 0, held: [] } };

const descriptionOf = {
  alipay: (out_trade_no) => alipay.trades.get(out_trade_no)?.subject,
  wechatpay: (out_trade_no) => JSON.parse(wechatpay.orders.get(out_trade_no)?.body ?? '{}').description,
};

function autoPay(name, fake, acknowledged) {
  fake.answerDelayMs = cfg.delayMs ?? 0;
  fake.onHeld = (out_trade_no, ms) => timed[name].held.push([descriptionOf[name](out_trade_no), ms]);
  fake.onOpened = (out_trade_no) => {
    setTimeout(
      async () => {
        await fake.pay(out_trade_no, { notify: false });
        // Signed (and for WeChat Pay encrypted) before the clock starts: the provider's work, not the gateway's.
        const note = name === 'alipay' ? fake.notificationFields(out_trade_no) : fake.notification(out_trade_no);
        const t0 = performance.now();
        try {
          const answer = await fake.notify(out_trade_no, note);
          timed[name].latencies.push(performance.now() - t0);
          if (!acknowledged(answer)) timed[name].failed++;
        } catch {
          timed[name].failed++;
        }
      },
      (cfg.delayMs ?? 0) + (cfg.payAfterMs ?? 50),
    );
  };
}
autoPay('alipay', alipay, (answer) => answer === 'success');
autoPay('wechatpay', wechatpay, (status) => status === 200 || status === 204);

const accounts = {
  alipay: {
    payment_method: 'alipay',
    provider: 'alipay',
    config: {
      app_id: alipay.app_id,
      alipay_public_key: alipay.alipay.publicKey,
      endpoint: alipay.endpoint,
      currency_mode: 'domestic',
    },
    secrets: { private_key: alipay.app.privateKey },
  },
  wechatpay: {
    payment_method: 'wechat',
    provider: 'wechatpay',
    config: {
      mchid: wechatpay.mchid,
      appid: wechatpay.appid,
      serial_no: wechatpay.merchantSerial,
      platform_public_key: wechatpay.platform.publicKey,
      platform_public_key_id: wechatpay.platformKeyId,
      endpoint: wechatpay.url,
      currency_mode: 'domestic',
    },
    secrets: { private_key: wechatpay.merchant.privateKey, apiv3_key: wechatpay.apiv3Key },
  },
};

process.on('message', async (m) => {
  if (m?.type === 'notifications') {
    process.send({ type: 'notifications', ...timed });
    for (const t of Object.values(timed)) {
      t.latencies = [];
      t.failed = 0;
      t.held = [];
    }
  } else if (m?.type === 'stop') {
    await Promise.all([alipay.close(), wechatpay.close()]);
    process.exit(0);
  }
});
process.send({ type: 'ready', accounts });

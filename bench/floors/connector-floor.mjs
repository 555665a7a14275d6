// Floor (d), for the connector scenario: the least a merchant-hosted create through a provider can
// cost on this machine, and the least its provider's notification can, measured against the same
// fake providers with the same generator and bodies as the gateway.
//   create: Fastify route, the gateway's create schema, one HMAC-SHA256 check (floor (a)), then the
//     provider's open call as its protocol asks (Alipay alipay.trade.precreate, RSA2-signed; WeChat
//     Pay POST /v3/pay/transactions/native, signed Authorization), the answer's signature verified,
//     the QR code returned. No database, no order, no idempotency, no outbox.
//   notification: the provider's signature verified (and WeChat Pay's resource decrypted), answered.
//     No settle, no merchant notification.
// Floor (e), with `store` in the config: (d) and the least storage a gateway that keeps its orders
// must add (floor-store.mjs). The order is inserted and committed durably before the provider is
// asked (so no QR is ever shown for an order a crash could lose), the QR stored after (committed,
// not waited on to disk, as the gateway does), and the notification's payment stored durably (one
// guarded update) before it is acknowledged. No idempotency beyond the unique merchant_reference,
// no nonce, no outbox, no merchant notification.
// The providers whose payment the hosted page opens (POLi, CoinPayments, Azupay, UnionPay) are
// hosted-providers.mjs's, on this same server.
// The protocol's pure pieces (what is signed, how an answer is read) are the gateway's own
// (dist/src/connectors/*/sign.js); HTTP is undici, as in the gateway.
// argv[2] is a JSON config: { key, accounts: { alipay, wechatpay, poli, ... } } (bench/fake-providers.mjs's),
// and for floor (e) store: { engine: 'sqlite', file } or { engine: 'postgres', url }.
// IPC: -> { type:'ready', url }, <- { type:'stop' }.
import { createPrivateKey, randomBytes, sign as rsaSign } from 'node:crypto';
import Fastify from 'fastify';
import { Agent, request } from 'undici';
import { createTransactionSchema } from '../../dist/src/http/schemas.js';
import {
  alipayTime,
  extractSignedObject,
  notificationSignContent,
  requestSignContent,
  rsa2Verify,
} from '../../dist/src/connectors/alipay/sign.js';
import { openStore } from './floor-store.mjs';
import { hostedProviders } from './hosted-providers.mjs';
import { merchantSignatureOk } from './merchant-signature.mjs';
import {
  authorization,
  decryptResource,
  nonceStr,
  platformKeys,
  requestMessage,
  signedHeaders,
  verifyProblem,
} from '../../dist/src/connectors/wechatpay/sign.js';

const cfg = JSON.parse(process.argv[2]);
const key = cfg.key;
const { alipay, wechatpay } = cfg.accounts;
const alipayKey = createPrivateKey(alipay.secrets.private_key);
const wechatKey = createPrivateKey(wechatpay.secrets.private_key);
const wechatPlatform = platformKeys(wechatpay.config);
const agent = new Agent({ keepAliveTimeout: 30_000, connections: 128 });
let base = '';
const store = cfg.store ? await openStore(cfg.store) : undefined;
// POLi, CoinPayments, Azupay and UnionPay: hosted creates, their pages and their notifications.
const hosted = hostedProviders({ accounts: cfg.accounts, store, agent, base: () => base });

/** RSA-SHA256 on the event loop, as the gateway signs (connectors/pem.ts). */
const signed = async (privateKey, text) => rsaSign('sha256', Buffer.from(text, 'utf8'), privateKey).toString('base64');

/** "120.00" -> 12000 (fen), without a float. */
function fen(amount) {
  const [whole, frac = ''] = amount.split('.');
  return Number(whole) * 100 + Number(frac.padEnd(2, '0').slice(0, 2));
}

async function alipayPrecreate(b, out_trade_no) {
  const params = {
    app_id: alipay.config.app_id,
    method: 'alipay.trade.precreate',
    format: 'JSON',
    charset: 'utf-8',
    sign_type: 'RSA2',
    timestamp: alipayTime(Date.now()),
    version: '1.0',
    notify_url: `${base}/notify/alipay`,
    biz_content: JSON.stringify({
      out_trade_no,
      total_amount: b.amount,
      subject: b.product_name,
      time_expire: alipayTime(Date.now() + 3_600_000),
    }),
  };
  params.sign = await signed(alipayKey, requestSignContent(params));
  const { biz_content, ...query } = params;
  const res = await request(`${alipay.config.endpoint}?${new URLSearchParams(query)}`, {
    method: 'POST',
    dispatcher: agent,
    headers: { 'content-type': 'application/x-www-form-urlencoded;charset=utf-8', accept: 'application/json' },
    body: new URLSearchParams({ biz_content }).toString(),
  });
  const text = await res.body.text();
  const parsed = JSON.parse(text);
  const content = extractSignedObject(text, 'alipay_trade_precreate_response');
  if (!content || !rsa2Verify(alipay.config.alipay_public_key, content, parsed.sign))
    throw new Error('Alipay answer not verified');
  return parsed.alipay_trade_precreate_response.qr_code;
}

async function wechatNative(b, out_trade_no) {
  const path = '/v3/pay/transactions/native';
  const body = JSON.stringify({
    appid: wechatpay.config.appid,
    mchid: wechatpay.config.mchid,
    description: b.product_name,
    out_trade_no,
    notify_url: `${base}/notify/wechatpay`,
    amount: { total: fen(b.amount), currency: 'CNY' },
  });
  const timestamp = Math.floor(Date.now() / 1000);
  const nonce = nonceStr();
  const signature = await signed(wechatKey, requestMessage('POST', path, timestamp, nonce, body));
  const res = await request(`${wechatpay.config.endpoint}${path}`, {
    method: 'POST',
    dispatcher: agent,
    body,
    headers: {
      authorization: authorization({
        mchid: wechatpay.config.mchid,
        serial_no: wechatpay.config.serial_no,
        timestamp,
        nonce,
        signature,
      }),
      accept: 'application/json',
      'content-type': 'application/json',
      'wechatpay-serial': wechatpay.config.platform_public_key_id,
    },
  });
  const text = await res.body.text();
  const h = signedHeaders(res.headers);
  if (res.statusCode !== 200 || !h || verifyProblem(h, text, wechatPlatform, Math.floor(Date.now() / 1000)))
    throw new Error(`WeChat Pay answer ${res.statusCode} not verified`);
  return JSON.parse(text).code_url;
}

const app = Fastify({ logger: false, bodyLimit: 64 * 1024 });
app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, text, done) =>
  done(null, text),
);

app.post('/v2/transaction', { schema: { body: createTransactionSchema } }, async (req) => {
  const b = req.body;
  if (!merchantSignatureOk(b, key)) return { code: 206, message: 'Signature from Merchant request is wrong' };
  if (b.host_type !== '1') return hosted.create(b);
  const out_trade_no = randomBytes(12).toString('hex');
  await store?.insert({ out_trade_no, merchant_reference: b.merchant_reference, amount: b.amount });
  const qr =
    b.payment_method === 'wechat' ? await wechatNative(b, out_trade_no) : await alipayPrecreate(b, out_trade_no);
  await store?.setQr(out_trade_no, qr);
  return { code: 0, message: 'SUCCESS', merchant_reference: b.merchant_reference, qr };
});

app.post('/notify/alipay', async (req, reply) => {
  const fields = Object.fromEntries(new URLSearchParams(req.body));
  const ok = rsa2Verify(alipay.config.alipay_public_key, notificationSignContent(fields), fields.sign ?? '');
  reply.type('text/plain');
  if (!ok || !fields.out_trade_no) return 'failure';
  await store?.markPaid(fields.out_trade_no);
  return 'success';
});

// WeChat Pay signs the body's exact text: it is read as a string.
app.register(async (scope) => {
  scope.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, text, done) => done(null, text));
  scope.post('/notify/wechatpay', async (req, reply) => {
    const h = signedHeaders(req.headers);
    if (!h || verifyProblem(h, req.body, wechatPlatform, Math.floor(Date.now() / 1000)))
      return reply.code(401).send({ code: 'SIGN_ERROR', message: 'bad signature' });
    const transaction = JSON.parse(decryptResource(wechatpay.secrets.apiv3_key, JSON.parse(req.body).resource));
    if (!transaction.out_trade_no) return reply.code(400).send({ code: 'PARAM_ERROR', message: 'no out_trade_no' });
    await store?.markPaid(transaction.out_trade_no);
    return reply.code(204).send();
  });
});

hosted.register(app);

const address = await app.listen({ port: 0, host: '127.0.0.1' });
base = address;

process.on('message', async (m) => {
  if (m?.type !== 'stop') return;
  await app.close();
  await agent.close();
  await store?.close();
  process.exit(0);
});
process.on('disconnect', () => process.exit(0));
process.send({ type: 'ready', url: address, pid: process.pid });

// Floors (d) and (e) of the providers whose payment is opened by the hosted page (POLi,
// CoinPayments, Azupay's PayID, UnionPay), added to the connector floor's server
// (bench/floors/connector-floor.mjs): the least a hosted create, its page and the provider's
// notification can cost on this machine, with the same fake providers as the gateway.
//   create (host_type 0): the order kept (floor (d): in memory; floor (e): also inserted durably),
//     its nonce answered. No idempotency, no outbox.
//   GET /v2/checkout/{nonce}: the nonce used once; floor (e) records the payment's opening durably
//     before the provider is asked and its answer after (floor-store.mjs); the provider's open call
//     as its protocol asks (POLi Initiate with Basic credentials; CoinPayments' signed invoice, its
//     currency's id asked once; Azupay's PaymentRequest with a per-request notification secret);
//     for UnionPay, no call: the consume form signed with the .pfx's key, for the browser to post.
//     The page is the least that carries what the customer needs: the order's id, and the
//     provider's link, PayID or form.
//   notification: as the gateway takes each (its authentication checked, then the payment asked
//     about at the provider before anything counts: POLi GetTransaction, CoinPayments' invoice,
//     Azupay's request, UnionPay queryTrans verified against the account's certificates), floor (e)
//     marks it paid durably, then it is acknowledged. No settle, no merchant notification.
// The protocols' pure pieces are the gateway's own (dist/src/connectors/*/), HTTP is undici.
import { randomInt } from 'node:crypto';
import { request } from 'undici';
import { initiateBody } from '../../dist/src/connectors/poli/transformers.js';
import { signatureMatches, signatureOf, timestampOf } from '../../dist/src/connectors/coinpayments/sign.js';
import { coinValue, fiatCurrencyOf, invoiceBody } from '../../dist/src/connectors/coinpayments/transformers.js';
import { notificationAuthorization, notificationAuthorized } from '../../dist/src/connectors/azupay/sign.js';
import { createBody } from '../../dist/src/connectors/azupay/transformers.js';
import { signFields, verifyFields } from '../../dist/src/connectors/unionpay/sign.js';
import { consumeFields, parseAnswer, queryFields } from '../../dist/src/connectors/unionpay/transformers.js';
import { readSigningCredential } from '../../dist/src/connectors/unionpay/pkcs12.js';

const HOUR = 3_600_000;
/** The gateway's letter for each flow's out_trade_no (domain/channel.ts outTradeNo). */
const LETTER = { polipay: 'R', coin_payments: 'R', payid: 'T', upi_upop: 'F' };
const escape = (s) =>
  String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
const orderOf = (out_trade_no) => out_trade_no.replace(/[A-Z]\d*$/, '');

/** "120.00" -> 12000, without a float. */
function minor(amount) {
  const [whole, frac = ''] = amount.split('.');
  return Number(whole) * 100 + Number(frac.padEnd(2, '0').slice(0, 2));
}

export function hostedProviders({ accounts, store, agent, base }) {
  const { poli, coinpayments, azupay, unionpay } = accounts;
  const orders = new Map();
  // Unique across the floors' processes: the fakes refuse (Azupay) or merge (UnionPay) a payment id seen before.
  const prefix = String(randomInt(1e6)).padStart(6, '0');
  let seq = 0;
  const unionpayKey = readSigningCredential(unionpay.secrets.sign_cert, unionpay.secrets.sign_cert_password);
  const trust = { root: unionpay.config.root_cert, middle: unionpay.config.middle_cert };
  let coinFiat;

  const send = async (url, opts) => {
    const res = await request(url, { dispatcher: agent, ...opts });
    return { status: res.statusCode, text: await res.body.text() };
  };
  const poliCall = (method, path, body) =>
    send(`${poli.config.endpoint}${path}`, {
      method,
      headers: {
        authorization: `Basic ${Buffer.from(`${poli.config.merchant_code}:${poli.secrets.authentication_code}`).toString('base64')}`,
        accept: 'application/json',
        ...(body && { 'content-type': 'application/json' }),
      },
      ...(body && { body: JSON.stringify(body) }),
    });
  const coinCall = (method, path, body) => {
    const url = `${coinpayments.config.endpoint}${path}`;
    const text = body ? JSON.stringify(body) : '';
    const timestamp = timestampOf(Date.now());
    const clientId = coinpayments.config.client_id;
    const signature = signatureOf(coinpayments.secrets.client_secret, { method, url, clientId, timestamp, body: text });
    return send(url, {
      method,
      headers: {
        accept: 'application/json',
        'x-coinpayments-client': clientId,
        'x-coinpayments-timestamp': timestamp,
        'x-coinpayments-signature': signature,
        ...(body && { 'content-type': 'application/json' }),
      },
      ...(body && { body: text }),
    });
  };
  const azupayCall = (method, path, body) =>
    send(`${azupay.config.endpoint}${path}`, {
      method,
      headers: {
        authorization: azupay.secrets.api_key,
        'content-type': 'application/json',
        accept: 'application/json',
      },
      ...(body && { body: JSON.stringify(body) }),
    });
  const unionpayQuery = async (orderId, txnTime) => {
    const fields = signFields(
      queryFields(unionpay.config.mer_id, orderId, txnTime),
      unionpayKey.privateKeyPem,
      unionpayKey.certId,
    );
    const r = await send(`${unionpay.config.endpoint}/gateway/api/queryTrans.do`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded;charset=UTF-8' },
      body: new URLSearchParams(fields).toString(),
    });
    const answer = parseAnswer(r.text);
    if (verifyFields(answer, trust, Date.now())) throw new Error('UnionPay answer not verified');
    return answer;
  };

  /** The provider's payment opened for the page: its panel's HTML. */
  const open = {
    async polipay(o, out_trade_no, page) {
      const now = Date.now();
      const body = initiateBody({
        out_trade_no,
        charge: { amount: minor(o.amount), currency: poli.config.currency },
        return_url: page,
        notify_url: `${base()}/notify/poli`,
        expires_at: now + HOUR,
        now,
      });
      const r = await poliCall('POST', '/api/v2/Transaction/Initiate', body);
      const answer = JSON.parse(r.text);
      if (answer.Success !== true) throw new Error(`POLi refused: ${r.text}`);
      return `<a id="pay" href="${escape(answer.NavigateURL)}">Continue to POLi</a>`;
    },
    async coin_payments(o, out_trade_no) {
      coinFiat ??= fiatCurrencyOf(
        JSON.parse((await coinCall('GET', `/api/v1/currencies?types=fiat&q=${coinpayments.config.currency}`)).text),
        coinpayments.config.currency,
      );
      const body = invoiceBody({
        out_trade_no,
        description: o.product_name,
        value: coinValue(minor(o.amount), 2, coinFiat),
        currency: coinFiat,
        notify_url: `${base()}/notify/coinpayments`,
      });
      const r = await coinCall('POST', '/api/v1/merchant/invoices', body);
      if (r.status !== 200) throw new Error(`CoinPayments refused: ${r.text}`);
      return `<a id="pay" href="${escape(JSON.parse(r.text).invoices[0].checkoutLink)}">Continue to CoinPayments</a>`;
    },
    async payid(o, out_trade_no) {
      const body = createBody({
        clientId: azupay.config.client_id,
        out_trade_no,
        description: o.product_name,
        amount: minor(o.amount),
        expires_at: Date.now() + HOUR,
        notify_url: `${base()}/notify/azupay`,
        authorization: notificationAuthorization(azupay.secrets.api_key, out_trade_no),
      });
      const r = await azupayCall('POST', '/paymentRequest', body);
      if (r.status !== 200) throw new Error(`Azupay refused: ${r.text}`);
      const record = JSON.parse(r.text);
      return `<p>Pay <b id="amount">${escape(o.amount)}</b> to PayID <b id="payid">${escape(record.PaymentRequest.payID)}</b></p>`;
    },
    async upi_upop(o, out_trade_no, page) {
      const now = Date.now();
      const fields = consumeFields({
        merId: unionpay.config.mer_id,
        out_trade_no,
        charge: { amount: minor(o.amount), currency: unionpay.config.currency },
        now,
        expires_at: now + HOUR,
        return_url: page,
        notify_url: `${base()}/notify/unionpay`,
        phone: false,
      });
      const signed = signFields(fields, unionpayKey.privateKeyPem, unionpayKey.certId);
      const hidden = Object.entries(signed)
        .map(([k, v]) => `<input type="hidden" name="${escape(k)}" value="${escape(v)}">`)
        .join('');
      return `<form id="unionpay-form" method="post" action="${escape(`${unionpay.config.endpoint}/gateway/api/frontTransReq.do`)}">${hidden}<button type="submit">Pay</button></form>`;
    },
  };

  return {
    /** A hosted create: the order kept, its nonce answered. */
    async create(b) {
      const order_id = `${prefix}${String(++seq).padStart(10, '0')}`;
      await store?.insert({ out_trade_no: order_id, merchant_reference: b.merchant_reference, amount: b.amount });
      orders.set(order_id, { ...b, order_id, used: false });
      return { code: 0, message: 'SUCCESS', host_url: `${base()}/v2/checkout`, nonce: order_id };
    },

    register(app) {
      app.get('/v2/checkout/:nonce', async (req, reply) => {
        const o = orders.get(req.params.nonce);
        if (!o || o.used) return reply.code(404).type('text/plain').send('no such page');
        o.used = true;
        const out_trade_no = `${o.order_id}${LETTER[o.payment_method]}`;
        if (store && !(await store.opening(o.order_id))) return reply.code(409).send('opened already');
        const panel = await open[o.payment_method](o, out_trade_no, `${base()}/v2/checkout/${o.order_id}`);
        await store?.setQr(o.order_id, panel);
        return reply
          .type('text/html; charset=utf-8')
          .send(
            `<!doctype html><title>Pay</title><dl><dt>Order</dt><dd id="order-id">${o.order_id}</dd><dt>Amount</dt><dd>${escape(o.amount)}</dd></dl>${panel}`,
          );
      });

      const paid = async (reply, out_trade_no, text = '') => {
        await store?.markPaid(orderOf(out_trade_no));
        return reply.code(200).type('text/plain').send(text);
      };

      app.post('/notify/poli', async (req, reply) => {
        const token = new URLSearchParams(req.body).get('Token') ?? '';
        const r = await poliCall('GET', `/api/v2/Transaction/GetTransaction?token=${encodeURIComponent(token)}`);
        const t = JSON.parse(r.text);
        if (r.status !== 200 || t.TransactionStatusCode !== 'Completed') return reply.code(400).send();
        return paid(reply, t.MerchantReference);
      });

      app.post('/notify/unionpay', async (req, reply) => {
        const fields = Object.fromEntries(new URLSearchParams(req.body));
        if (verifyFields(fields, trust, Date.now())) return reply.code(400).send('bad signature');
        const answer = await unionpayQuery(fields.orderId, fields.txnTime);
        if (answer.respCode !== '00' || answer.origRespCode !== '00') return reply.code(400).send();
        return paid(reply, fields.orderId, 'ok');
      });

      // CoinPayments and Azupay authenticate the body's exact text: it is read as a string.
      app.register(async (scope) => {
        scope.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, text, done) => done(null, text));
        scope.post('/notify/coinpayments', async (req, reply) => {
          const h = (n) => String(req.headers[n] ?? '');
          const ok = signatureMatches(h('x-coinpayments-signature'), coinpayments.secrets.client_secret, {
            method: 'POST',
            url: `${base()}/notify/coinpayments`,
            clientId: h('x-coinpayments-client'),
            timestamp: h('x-coinpayments-timestamp'),
            body: req.body,
          });
          if (!ok) return reply.code(401).send();
          const told = JSON.parse(req.body).invoice ?? {};
          const r = await coinCall('GET', `/api/v1/merchant/invoices/${encodeURIComponent(told.id)}`);
          const invoice = JSON.parse(r.text);
          if (r.status !== 200 || !['paid', 'completed'].includes(String(invoice.status).toLowerCase()))
            return reply.code(400).send();
          return paid(reply, invoice.invoiceId);
        });
        scope.post('/notify/azupay', async (req, reply) => {
          const body = JSON.parse(req.body);
          const out_trade_no = body.PaymentRequest?.clientTransactionId ?? '';
          if (!notificationAuthorized(String(req.headers.authorization ?? ''), azupay.secrets.api_key, out_trade_no))
            return reply.code(401).send();
          const id = body.PaymentRequestStatus?.paymentRequestId ?? '';
          const r = await azupayCall('GET', `/paymentRequest?id=${encodeURIComponent(id)}`);
          const record = JSON.parse(r.text);
          if (r.status !== 200 || record.PaymentRequestStatus?.status !== 'COMPLETE') return reply.code(400).send();
          return paid(reply, out_trade_no);
        });
      });
    },
  };
}

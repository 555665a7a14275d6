// A fake WeChat Pay API v3 on 127.0.0.1 that speaks the documented protocol with real keys: it
// verifies every request's Authorization (the merchant's RSA signature, serial, timestamp), signs
// every answer with the platform key (Wechatpay-* headers; or, when a test asks, a probe, none or
// a skewed time), keeps orders and refunds, lets a test pay, and notifies with the resource
// encrypted (AEAD_AES_256_GCM, APIv3 key) and signed: duplicated, dropped, or tampered. Its
// crypto is written here from the documentation, not taken from the gateway's code.
import { createCipheriv, createSign, createVerify, randomBytes, X509Certificate } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { deliver, FakeServer, keyOf, keyPair, type RawRequest } from './fake-server.js';
import { wechatBillCsv, type WechatBillEdits } from './fake-wechatpay-bill.js';

export interface WechatOrder {
  out_trade_no: string;
  transaction_id: string;
  trade_type: string;
  body: string;
  total: number;
  currency: string;
  notify_url: string;
  trade_state: 'NOTPAY' | 'SUCCESS' | 'CLOSED' | 'REFUND';
  code_url: string;
  prepay_id: string;
  refunds: Map<string, { refund: number; status: 'SUCCESS' | 'PROCESSING'; at?: number }>;
  /** When it was paid: the bill's time. */
  paid_at?: number;
  /** Opened through the cross-border API (/v3/global), which names some fields otherwise. */
  global: boolean;
}

export type AnswerSigning = 'ok' | 'probe' | 'none' | 'skewed' | 'wrong-key';

const b64sign = (privateKey: string, message: string) =>
  createSign('RSA-SHA256').update(message, 'utf8').sign(keyOf(privateKey), 'base64');
const nonce = () => randomBytes(16).toString('hex');

export class FakeWechatPay extends FakeServer {
  readonly mchid = '1900000109';
  readonly appid = 'wxd678efh567hg6787';
  readonly merchantSerial = '5157F09EFDC096DE15EBE81A47057A7232F1B8E1';
  readonly platformKeyId = 'PUB_KEY_ID_0119000001092025112400000000000001';
  private kept: { pem: string; serial: string; privateKey: string } | undefined;
  /**
   * A platform certificate (a self-signed test fixture, its serial as WeChat Pay writes it): a
   * merchant on certificates, or moving from them to the public key, is signed for with it. Read
   * when first used, from test/support (the bench's build of this file runs from dist).
   */
  get certificate(): { pem: string; serial: string; privateKey: string } {
    if (!this.kept) {
      const read = (name: string) => {
        const beside = new URL(`./${name}`, import.meta.url);
        return readFileSync(
          existsSync(beside) ? beside : new URL(`../../../test/support/${name}`, import.meta.url),
          'utf8',
        );
      };
      const pem = read('wechatpay-platform-certificate.pem');
      this.kept = {
        pem,
        serial: new X509Certificate(pem).serialNumber.toUpperCase(),
        privateKey: read('wechatpay-platform-certificate-key.pem'),
      };
    }
    return this.kept;
  }
  /** Which platform key signs notifications (WeChat Pay moves a merchant from one to the other gradually). */
  notificationKey: 'public-key' | 'certificate' = 'public-key';
  readonly apiv3Key = 'c4fe2a9d7b31e8605a1f4d2c9b8e7a63';
  /** Codes exchanged for an openid (sns/oauth2/access_token calls), good or not. */
  tokenRequests = 0;
  /** The H5 payment domain registered with WeChat Pay: when set, the H5 page wants a Referer from it. */
  h5Domain: string | undefined;
  /** The official account's AppSecret, and the openid WeChat's web authorization gives its payer. */
  readonly appsecret = '3f1e6d2c8b7a90415e6d2c3b4a5f6e7d';
  readonly openid = 'oUpF8uMuAJO_M2pxb1Q9zNjWeS6o';
  private readonly codes = new Set<string>();
  readonly merchant = keyPair(2);
  readonly platform = keyPair(3);
  readonly orders = new Map<string, WechatOrder>();
  readonly notifications: Array<{ out_trade_no: string; status: number }> = [];
  readonly refused: string[] = [];
  /** How the next answers are signed. */
  signing: AnswerSigning = 'ok';
  /** The status a new refund gets: PROCESSING ones become SUCCESS at settleRefunds(). */
  refundStatus: 'SUCCESS' | 'PROCESSING' = 'SUCCESS';
  private seq = 0;

  static async start(): Promise<FakeWechatPay> {
    const fake = new FakeWechatPay();
    await fake.listen();
    return fake;
  }

  protected async handle(req: RawRequest, res: ServerResponse): Promise<void> {
    const path = req.url.pathname;
    if (path === '/fake/h5' && req.method === 'GET') return this.h5Page(req, res);
    if (path === '/fake/h5-pay' && req.method === 'POST') return this.h5Paid(req, res);
    if (path === '/connect/oauth2/authorize' && req.method === 'GET') return this.authorize(req, res);
    if (path === '/sns/oauth2/access_token' && req.method === 'GET') return this.accessToken(req, res);
    const problem = this.checkAuthorization(req);
    if (problem) {
      this.refused.push(`${req.method} ${path}: ${problem}`);
      return this.answer(res, 401, { code: 'SIGN_ERROR', message: problem });
    }
    if (path === '/v3/billdownload/file' && req.method === 'GET') {
      // The file itself: no Wechatpay-Signature (its hash is in the signed answer that named it).
      this.calls.push('bill download');
      const csv = this.billCsv(req.url.searchParams.get('token') ?? '') + (this.tamperBill ? ' ' : '');
      return void res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(gzipSync(Buffer.from(csv)));
    }
    const route = this.route(req.method, path);
    if (!route) return this.answer(res, 404, { code: 'NOT_FOUND', message: `no route ${req.method} ${path}` });
    this.calls.push(route.op);
    const fault = this.takeFault(route.op);
    let result: [number, Record<string, unknown> | null] = [500, null];
    const work = () => (result = route.run(req.body ? (JSON.parse(req.body) as Record<string, unknown>) : {}, req));
    if (await this.applyFault(fault, res, work)) return;
    if (typeof fault === 'object')
      return this.answer(res, 400, { code: fault.business, message: fault.message ?? fault.business });
    work();
    return this.answer(res, result[0], result[1]);
  }

  private checkAuthorization(req: RawRequest): string | undefined {
    const header = String(req.headers.authorization ?? '');
    if (!header.startsWith('WECHATPAY2-SHA256-RSA2048 ')) return 'no WECHATPAY2-SHA256-RSA2048 Authorization';
    const fields = Object.fromEntries([...header.slice(26).matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (fields.mchid !== this.mchid) return `unknown mchid ${fields.mchid}`;
    if (fields.serial_no !== this.merchantSerial) return `unknown merchant serial ${fields.serial_no}`;
    if (Math.abs(Number(fields.timestamp) - Date.now() / 1000) >= 300) return 'timestamp too far from now';
    const message = `${req.method}\n${req.url.pathname}${req.url.search}\n${fields.timestamp}\n${fields.nonce_str}\n${req.body}\n`;
    if (
      !createVerify('RSA-SHA256')
        .update(message, 'utf8')
        .verify(keyOf(this.merchant.publicKey), fields.signature ?? '', 'base64')
    )
      return 'the signature does not verify with the merchant public key';
    const serial = req.headers['wechatpay-serial'];
    if (serial !== this.platformKeyId && serial !== this.certificate.serial)
      return `Wechatpay-Serial ${String(serial)} is not a platform key`;
    return undefined;
  }

  private route(
    method: string,
    path: string,
  ):
    | { op: string; run: (body: Record<string, unknown>, req: RawRequest) => [number, Record<string, unknown> | null] }
    | undefined {
    let m: RegExpExecArray | null;
    if (method === 'POST' && (m = /^\/v3\/(?:pay|global)\/transactions\/(native|h5|jsapi|mweb)$/.exec(path)))
      return { op: 'order', run: (b) => this.order(m![1], b, path.startsWith('/v3/global')) };
    if (method === 'GET' && (m = /^\/v3\/(?:pay|global)\/transactions\/out-trade-no\/([^/]+)$/.exec(path)))
      return { op: 'query', run: () => this.query(decodeURIComponent(m![1])) };
    if (method === 'POST' && (m = /^\/v3\/(?:pay|global)\/transactions\/out-trade-no\/([^/]+)\/close$/.exec(path)))
      return { op: 'close', run: (b) => this.closeOrder(decodeURIComponent(m![1]), b) };
    if (method === 'POST' && /^\/v3\/(refund\/domestic\/refunds|global\/refunds)$/.test(path))
      return { op: 'refund', run: (b) => this.refund(b, path.startsWith('/v3/global')) };
    if (
      method === 'GET' &&
      (m = /^\/v3\/(?:refund\/domestic\/refunds|global\/refunds\/out-refund-no)\/([^/]+)$/.exec(path))
    )
      return { op: 'refund-query', run: () => this.refundQuery(decodeURIComponent(m![1])) };
    if (method === 'GET' && path === '/v3/bill/tradebill')
      return { op: 'tradebill', run: (_b, req) => this.tradebill(req) };
    return undefined;
  }

  /** The bills: published (else STATEMENT_CREATING), and what they get wrong on purpose. */
  billReady = true;
  billEdits: WechatBillEdits = {};
  /** The file served is not the one the answer's hash names (changed on its way). */
  tamperBill = false;

  /** A day's bill served as given instead of one written from the fake's orders (the bench's large statements). */
  readonly billFiles = new Map<string, string>();

  private billCsv(date: string): string {
    const given = this.billFiles.get(date);
    if (given !== undefined) return given;
    const orders = [...this.orders.values()].map((o) => ({
      ...o,
      refunds: [...o.refunds].map(([out_refund_no, r]) => ({
        out_refund_no,
        refund: r.refund,
        status: r.status,
        at: r.at ?? Date.now(),
      })),
    }));
    return wechatBillCsv(this.appid, this.mchid, date, orders, this.billEdits);
  }

  private tradebill(req: RawRequest): [number, Record<string, unknown>] {
    const q = req.url.searchParams;
    const date = q.get('bill_date') ?? '';
    if (!/^\d{4}-\d{2}-\d{2}$/.test(date) || (q.get('bill_type') ?? 'ALL') !== 'ALL')
      return [400, { code: 'PARAM_ERROR', message: 'bill_date' }];
    if (!this.billReady) return [400, { code: 'STATEMENT_CREATING', message: '账单生成中' }];
    const csv = this.billCsv(date);
    if (csv.split('\r\n').length <= 4) return [400, { code: 'NO_STATEMENT_EXIST', message: '账单文件不存在' }];
    return [
      200,
      {
        hash_type: 'SHA1',
        hash_value: createHash('sha1').update(csv).digest('hex'),
        download_url: `${this.url}/v3/billdownload/file?token=${date}`,
      },
    ];
  }

  private order(kind: string, b: Record<string, unknown>, global: boolean): [number, Record<string, unknown>] {
    const amount = (b.amount ?? {}) as { total?: unknown; currency?: string };
    if (b.mchid !== this.mchid || b.appid !== this.appid)
      return [400, { code: 'APPID_MCHID_NOT_MATCH', message: 'appid and mchid do not match' }];
    if (typeof b.out_trade_no !== 'string' || !/^[0-9A-Za-z_\-|*]{6,32}$/.test(b.out_trade_no))
      return [400, { code: 'PARAM_ERROR', message: 'out_trade_no' }];
    if (typeof amount.total !== 'number' || !Number.isInteger(amount.total) || amount.total <= 0)
      return [400, { code: 'PARAM_ERROR', message: 'amount.total' }];
    if (!global && amount.currency !== 'CNY')
      return [400, { code: 'PARAM_ERROR', message: 'domestic orders are in CNY' }];
    if (global && (typeof b.merchant_category_code !== 'string' || typeof b.trade_type !== 'string'))
      return [400, { code: 'PARAM_ERROR', message: 'trade_type and merchant_category_code are required' }];
    if (kind === 'h5' || kind === 'mweb') {
      const scene = (b.scene_info ?? {}) as { payer_client_ip?: string; h5_info?: { type?: string } };
      if (!scene.payer_client_ip || !scene.h5_info?.type)
        return [400, { code: 'PARAM_ERROR', message: 'scene_info.payer_client_ip and h5_info are required' }];
    }
    if (kind === 'jsapi' && !(b.payer as { openid?: string } | undefined)?.openid)
      return [400, { code: 'PARAM_ERROR', message: 'payer.openid' }];
    const text = JSON.stringify(b);
    const existing = this.orders.get(b.out_trade_no);
    if (existing) {
      if (existing.trade_state === 'SUCCESS' || existing.trade_state === 'REFUND')
        return [400, { code: 'ORDERPAID', message: '订单已支付' }];
      if (existing.trade_state === 'CLOSED') return [400, { code: 'ORDER_CLOSED', message: '该订单已失效' }];
      if (existing.body !== text) return [403, { code: 'OUT_TRADE_NO_USED', message: '商户订单号重复' }];
      return [200, this.orderAnswer(kind, existing)];
    }
    const n = ++this.seq;
    const order: WechatOrder = {
      out_trade_no: b.out_trade_no,
      transaction_id: `42000000002026112400${String(n).padStart(8, '0')}`,
      trade_type: kind.toUpperCase(),
      body: text,
      total: amount.total,
      currency: amount.currency ?? 'CNY',
      notify_url: typeof b.notify_url === 'string' ? b.notify_url : '',
      trade_state: 'NOTPAY',
      code_url: `weixin://wxpay/bizpayurl?pr=fake${n}`,
      prepay_id: `wx2411${String(n).padStart(10, '0')}`,
      refunds: new Map(),
      global,
    };
    this.orders.set(order.out_trade_no, order);
    this.opened(order.out_trade_no);
    return [200, this.orderAnswer(kind, order)];
  }

  private orderAnswer(kind: string, o: WechatOrder): Record<string, unknown> {
    if (kind === 'native') return { code_url: o.code_url };
    // The cross-border API names the mobile page mweb_url.
    if (kind === 'h5' || kind === 'mweb')
      return {
        [kind === 'mweb' ? 'mweb_url' : 'h5_url']: `${this.url}/fake/h5?prepay_id=${o.prepay_id}&package=2150917749`,
      };
    return { prepay_id: o.prepay_id };
  }

  private transaction(o: WechatOrder): Record<string, unknown> {
    const paid = o.trade_state !== 'NOTPAY' && o.trade_state !== 'CLOSED';
    return {
      appid: this.appid,
      mchid: this.mchid,
      out_trade_no: o.out_trade_no,
      // WeChat Pay's order number: `id` in the cross-border API.
      ...(paid && { [o.global ? 'id' : 'transaction_id']: o.transaction_id }),
      trade_type: o.trade_type,
      trade_state: o.trade_state,
      trade_state_desc: o.trade_state,
      bank_type: 'OTHERS',
      success_time: '2026-11-24T10:34:56+08:00',
      payer: { openid: 'oUpF8uMuAJO_M2pxb1Q9zNjWeS6o' },
      amount: { total: o.total, payer_total: o.total, currency: o.currency, payer_currency: 'CNY' },
    };
  }

  private query(out_trade_no: string): [number, Record<string, unknown>] {
    const o = this.orders.get(out_trade_no);
    return o ? [200, this.transaction(o)] : [404, { code: 'ORDER_NOT_EXIST', message: '订单不存在' }];
  }

  private closeOrder(out_trade_no: string, b: Record<string, unknown>): [number, null | Record<string, unknown>] {
    if (JSON.stringify(b) !== JSON.stringify({ mchid: this.mchid }))
      return [400, { code: 'PARAM_ERROR', message: 'the body of a close is {mchid}' }];
    const o = this.orders.get(out_trade_no);
    if (!o) return [404, { code: 'ORDER_NOT_EXIST', message: '订单不存在' }];
    if (o.trade_state === 'SUCCESS' || o.trade_state === 'REFUND')
      return [400, { code: 'ORDERPAID', message: '订单已支付' }];
    o.trade_state = 'CLOSED';
    return [204, null];
  }

  private refund(b: Record<string, unknown>, global: boolean): [number, Record<string, unknown>] {
    if (global && (b.mchid !== this.mchid || b.appid !== this.appid))
      return [400, { code: 'PARAM_ERROR', message: 'a cross-border refund names mchid and appid' }];
    const o = this.orders.get(String(b.out_trade_no));
    const amount = (b.amount ?? {}) as { refund?: number; total?: number; currency?: string };
    if (!o || (o.trade_state !== 'SUCCESS' && o.trade_state !== 'REFUND'))
      return [404, { code: 'RESOURCE_NOT_EXISTS', message: '订单不存在' }];
    if (amount.total !== o.total || amount.currency !== o.currency || typeof amount.refund !== 'number')
      return [400, { code: 'PARAM_ERROR', message: 'amount' }];
    const id = String(b.out_refund_no);
    const made = o.refunds.get(id);
    if (made)
      return made.refund === amount.refund
        ? [200, this.refundObject(o, id)]
        : [400, { code: 'INVALID_REQUEST', message: 'out_refund_no reused with another amount' }];
    const refunded = [...o.refunds.values()].reduce((s, r) => s + r.refund, 0);
    if (refunded + amount.refund > o.total) return [403, { code: 'NOT_ENOUGH', message: '余额不足' }];
    o.refunds.set(id, { refund: amount.refund, status: this.refundStatus, at: Date.now() });
    o.trade_state = 'REFUND';
    return [200, this.refundObject(o, id)];
  }

  private refundObject(o: WechatOrder, id: string): Record<string, unknown> {
    const r = o.refunds.get(id)!;
    return {
      refund_id: `50000000382019052709732678${id.slice(-4)}`,
      out_refund_no: id,
      transaction_id: o.transaction_id,
      out_trade_no: o.out_trade_no,
      channel: 'ORIGINAL',
      status: r.status,
      amount: { refund: r.refund, total: o.total, currency: o.currency },
    };
  }

  private refundQuery(id: string): [number, Record<string, unknown>] {
    for (const o of this.orders.values()) if (o.refunds.has(id)) return [200, this.refundObject(o, id)];
    return [404, { code: 'RESOURCE_NOT_EXISTS', message: '退款单不存在' }];
  }

  /** Signs an answer as WeChat Pay does, or as a test asked (a probe, none, a skewed time, another key). */
  private signatureHeaders(body: string): Record<string, string> {
    if (this.signing === 'none') return {};
    const ts = String(Math.floor(Date.now() / 1000) - (this.signing === 'skewed' ? 600 : 0));
    const n = nonce();
    const key = this.signing === 'wrong-key' ? this.merchant.privateKey : this.platform.privateKey;
    const signature =
      this.signing === 'probe' ? `WECHATPAY/SIGNTEST/${b64sign(key, 'x')}` : b64sign(key, `${ts}\n${n}\n${body}\n`);
    return {
      'wechatpay-timestamp': ts,
      'wechatpay-nonce': n,
      'wechatpay-signature': signature,
      'wechatpay-serial': this.platformKeyId,
    };
  }

  private answer(res: ServerResponse, status: number, body: Record<string, unknown> | null): void {
    const text = body === null ? '' : JSON.stringify(body);
    res
      .writeHead(status, {
        ...(body !== null && { 'content-type': 'application/json' }),
        'request-id': nonce(),
        ...this.signatureHeaders(text),
      })
      .end(text);
  }

  private h5Page(req: RawRequest, res: ServerResponse): void {
    // WeChat Pay checks that the visit comes from the merchant's registered H5 domain, by its Referer.
    if (this.h5Domain !== undefined) {
      const referer = req.headers.referer;
      if (!referer || !URL.canParse(referer) || new URL(referer).host !== this.h5Domain) {
        return void res
          .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
          .end(`<!doctype html><p id="fake-h5-refused">商家参数格式有误 (Referer ${referer ?? 'missing'})</p>`);
      }
    }
    const prepay = req.url.searchParams.get('prepay_id');
    const o = [...this.orders.values()].find((x) => x.prepay_id === prepay);
    if (!o) return void res.writeHead(404).end();
    const back = req.url.searchParams.get('redirect_url') ?? '';
    const esc = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      .end(`<!doctype html><title>Fake WeChat Pay</title><h1 id="fake-wechatpay">WeChat Pay</h1><p id="fake-amount">${o.total}</p>
<form method="post" action="/fake/h5-pay"><input type="hidden" name="out_trade_no" value="${esc(o.out_trade_no)}"><input type="hidden" name="redirect_url" value="${esc(back)}"><button id="fake-pay">Pay</button></form>`);
  }

  private async h5Paid(req: RawRequest, res: ServerResponse): Promise<void> {
    const form = new URLSearchParams(req.body);
    await this.pay(form.get('out_trade_no')!);
    res.writeHead(303, { location: form.get('redirect_url')! }).end();
  }

  /** WeChat's web authorization: back to redirect_uri at once with a one-time code and the state. */
  private authorize(req: RawRequest, res: ServerResponse): void {
    const q = req.url.searchParams;
    if (q.get('appid') !== this.appid || q.get('response_type') !== 'code' || q.get('scope') !== 'snsapi_base')
      return void res.writeHead(400).end('bad authorize request');
    const code = `code${randomBytes(8).toString('hex')}`;
    this.codes.add(code);
    const back = new URL(q.get('redirect_uri')!);
    back.searchParams.set('code', code);
    back.searchParams.set('state', q.get('state') ?? '');
    res.writeHead(302, { location: back.toString() }).end();
  }

  private accessToken(req: RawRequest, res: ServerResponse): void {
    const q = req.url.searchParams;
    this.tokenRequests++;
    const send = (body: Record<string, unknown>): void =>
      void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (q.get('appid') !== this.appid || q.get('secret') !== this.appsecret)
      return send({ errcode: 40125, errmsg: 'invalid appsecret' });
    const code = q.get('code') ?? '';
    if (!this.codes.delete(code)) return send({ errcode: 40029, errmsg: 'invalid code' });
    send({
      access_token: 'ACCESS',
      expires_in: 7200,
      refresh_token: 'REFRESH',
      openid: this.openid,
      scope: 'snsapi_base',
    });
  }

  /**
   * WeChat's payment sheet (getBrandWCPayRequest): checks the parameters' paySign with the
   * merchant's public key and the payer, then pays and notifies. The error WeChat would show, or 'ok'.
   */
  async payJsapi(params: Record<string, string>): Promise<string> {
    const message = `${params.appId}\n${params.timeStamp}\n${params.nonceStr}\n${params.package}\n`;
    if (params.appId !== this.appid || params.signType !== 'RSA') return 'bad appId or signType';
    if (
      !createVerify('RSA-SHA256')
        .update(message, 'utf8')
        .verify(keyOf(this.merchant.publicKey), params.paySign ?? '', 'base64')
    )
      return 'paySign does not verify';
    const o = [...this.orders.values()].find((x) => `prepay_id=${x.prepay_id}` === params.package);
    if (!o) return 'unknown prepay_id';
    if ((JSON.parse(o.body) as { payer?: { openid?: string } }).payer?.openid !== this.openid)
      return 'the order is for another payer';
    await this.pay(o.out_trade_no);
    return 'ok';
  }

  /** The customer pays; WeChat Pay notifies (unless `notify` is false), `times` times. */
  async pay(out_trade_no: string, opts: { notify?: boolean; times?: number } = {}): Promise<WechatOrder> {
    const o = this.orders.get(out_trade_no);
    if (!o) throw new Error(`no order ${out_trade_no}`);
    o.trade_state = 'SUCCESS';
    o.paid_at ??= Date.now();
    if (opts.notify !== false) for (let i = 0; i < (opts.times ?? 1); i++) await this.notify(out_trade_no);
    return o;
  }

  /** Finishes PROCESSING refunds. */
  settleRefunds(): void {
    for (const o of this.orders.values()) for (const r of o.refunds.values()) r.status = 'SUCCESS';
  }

  /** A notification of the order as it stands: the body (resource encrypted) and its signed headers. */
  notification(
    out_trade_no: string,
    opts: { signature?: 'ok' | 'probe' | 'bad'; apiv3Key?: string; transaction?: Record<string, unknown> } = {},
  ): { body: string; headers: Record<string, string> } {
    const o = this.orders.get(out_trade_no)!;
    const plain = JSON.stringify(opts.transaction ?? this.transaction(o));
    const iv = randomBytes(6).toString('hex');
    const cipher = createCipheriv(
      'aes-256-gcm',
      Buffer.from(opts.apiv3Key ?? this.apiv3Key, 'utf8'),
      Buffer.from(iv, 'utf8'),
    ).setAAD(Buffer.from('transaction', 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()]).toString(
      'base64',
    );
    const body = JSON.stringify({
      id: `EV-2018022511223320873${++this.seq}`,
      create_time: '2026-11-24T13:29:35+08:00',
      resource_type: 'encrypt-resource',
      event_type: 'TRANSACTION.SUCCESS',
      summary: '支付成功',
      resource: {
        original_type: 'transaction',
        algorithm: 'AEAD_AES_256_GCM',
        ciphertext,
        associated_data: 'transaction',
        nonce: iv,
      },
    });
    const ts = String(Math.floor(Date.now() / 1000));
    const n = nonce();
    const byCertificate = this.notificationKey === 'certificate';
    let signature = b64sign(
      byCertificate ? this.certificate.privateKey : this.platform.privateKey,
      `${ts}\n${n}\n${body}\n`,
    );
    if (opts.signature === 'probe') signature = `WECHATPAY/SIGNTEST/${signature}`;
    if (opts.signature === 'bad') signature = b64sign(this.merchant.privateKey, `${ts}\n${n}\n${body}\n`);
    return {
      body,
      headers: {
        'content-type': 'application/json',
        'wechatpay-timestamp': ts,
        'wechatpay-nonce': n,
        'wechatpay-signature': signature,
        'wechatpay-serial': byCertificate ? this.certificate.serial : this.platformKeyId,
        'wechatpay-signature-type': 'WECHATPAY2-SHA256-RSA2048',
      },
    };
  }

  /** Sends a notification to the order's notify_url; the gateway's answer status. */
  async notify(out_trade_no: string, note = this.notification(out_trade_no)): Promise<number> {
    const o = this.orders.get(out_trade_no)!;
    const answer = await deliver(o.notify_url, note.body, note.headers);
    this.notifications.push({ out_trade_no, status: answer.status });
    return answer.status;
  }
}

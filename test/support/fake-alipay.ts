// A fake Alipay OpenAPI gateway on 127.0.0.1 that speaks the documented protocol with real keys:
// it verifies every request's RSA2 signature with the app's public key (and its GMT+8 timestamp),
// answers signed with "Alipay's" key, keeps trades and refunds, lets a test scan, pay and notify
// (signed form POSTs: duplicated, out of order, or dropped), and fails on request. In certificate
// mode it also wants the app's and the root certificates' SNs in every request and names its own
// in every answer. Its signing is written here from the documentation, not taken from the gateway's code.
import { createSign, createVerify, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import { alipayBillZip, type BillEdits } from './fake-alipay-bill.js';
import { deliver, FakeServer, keyOf, keyPair, type KeyPair, type RawRequest } from './fake-server.js';

export interface AlipayTrade {
  out_trade_no: string;
  trade_no: string;
  total_amount: string;
  subject: string;
  trans_currency: string | null;
  qr_code: string;
  notify_url: string;
  /** Alipay creates a precreated trade when its QR is scanned, a mobile one when the page is opened. */
  exists: boolean;
  trade_status: 'WAIT_BUYER_PAY' | 'TRADE_SUCCESS' | 'TRADE_CLOSED' | 'TRADE_FINISHED';
  refunds: Map<string, string>;
  /** When it was paid, and each refund made (by out_request_no): the bill's times. */
  paid_at?: number;
  refundTimes: Map<string, number>;
  /** Calls to the product that opened it: precreate or wap.pay. */
  product: string;
}

const sign = (privateKey: string, content: string) =>
  createSign('RSA-SHA256').update(content, 'utf8').sign(keyOf(privateKey), 'base64');
const joined = (fields: Record<string, string>, skip: string[]) =>
  Object.keys(fields)
    .filter((k) => !skip.includes(k) && fields[k] !== '')
    .sort()
    .map((k) => `${k}=${fields[k]}`)
    .join('&');
const cents = (amount: string) => Math.round(Number(amount) * 100);
const yuan = (c: number) => (c / 100).toFixed(2);

/** Now in Alipay's clock (GMT+8), `yyyy-MM-dd HH:mm:ss`. */
function beijing(ms = Date.now()): string {
  return new Date(ms + 8 * 3600_000).toISOString().slice(0, 19).replace('T', ' ');
}

export class FakeAlipay extends FakeServer {
  app_id = '2021000000000001';
  /** The merchant app's key pair (the gateway signs with the private key) and Alipay's own. */
  app: KeyPair = keyPair(0);
  alipay: KeyPair = keyPair(1);
  /**
   * Certificate mode: the SNs each request must name (app_cert_sn, alipay_root_cert_sn) and the one
   * each answer names (alipay_cert_sn), as Alipay keeps them for an app in that mode.
   */
  certMode?: { app_cert_sn: string; alipay_root_cert_sn: string; alipay_cert_sn: string };
  readonly trades = new Map<string, AlipayTrade>();
  /** Every notification sent, with the gateway's answer. */
  readonly notifications: Array<{ out_trade_no: string; trade_status: string; answer: string }> = [];
  /** Requests refused for a bad signature or timestamp. */
  readonly refused: string[] = [];
  /** Whether a new trade takes trans_currency (an overseas contract); else it is priced in CNY, the fields ignored. */
  takesCurrency = true;
  /** Whether a notification names the trade's trans_currency (the query answer always does). */
  notificationNamesCurrency = true;
  /** The bills: published (else isp.bill_not_exist), and what they get wrong on purpose. */
  billReady = true;
  billEdits: BillEdits = {};
  private seq = 0;

  static async start(opts: { certMode?: boolean; appId?: string } = {}): Promise<FakeAlipay> {
    const fake = new FakeAlipay();
    if (opts.appId) fake.app_id = opts.appId;
    if (opts.certMode) {
      const f = CERT_MODE_FIXTURES;
      fake.app = { privateKey: f.file('app.key'), publicKey: publicKeyOfCert(f.file('app.crt')) };
      fake.alipay = { privateKey: f.file('alipay.key'), publicKey: publicKeyOfCert(f.file('alipay.crt')) };
      fake.certMode = f.expected();
    }
    await fake.listen();
    return fake;
  }

  get endpoint(): string {
    return `${this.url}/gateway.do`;
  }

  protected async handle(req: RawRequest, res: ServerResponse): Promise<void> {
    if (req.url.pathname === '/fake/wap-pay' && req.method === 'POST') return this.wapPaid(req, res);
    const bill = /^\/fake\/bill\/(\d{4}-\d{2}-\d{2})\.csv\.zip$/.exec(req.url.pathname);
    if (bill && req.method === 'GET') {
      this.calls.push('bill download');
      const zip = alipayBillZip('2088102177649450', bill[1], this.billTrades(), this.billEdits);
      return void res.writeHead(200, { 'content-type': 'application/zip' }).end(Buffer.from(zip));
    }
    if (req.url.pathname !== '/gateway.do') return void res.writeHead(404).end();
    const params: Record<string, string> = Object.fromEntries(req.url.searchParams);
    for (const [k, v] of new URLSearchParams(req.body)) params[k] = v;
    const method = params.method ?? '';
    const certRefusal = this.checkCertSns(params);
    if (certRefusal) {
      this.refused.push(`${method}: ${certRefusal}`);
      return this.answer(
        res,
        method,
        { code: '40002', msg: 'Invalid Arguments', sub_code: certRefusal, sub_msg: certRefusal },
        false,
      );
    }
    const problem = this.checkRequest(params);
    if (problem) {
      this.refused.push(`${method}: ${problem}`);
      return this.answer(
        res,
        method,
        { code: '40002', msg: 'Invalid Arguments', sub_code: 'isv.invalid-signature', sub_msg: problem },
        false,
      );
    }
    this.calls.push(method);
    const biz = JSON.parse(params.biz_content ?? '{}') as Record<string, string>;
    if (method === 'alipay.trade.wap.pay' && req.method === 'GET') return this.wapPage(params, biz, res);
    const fault = this.takeFault(method);
    let result: Record<string, unknown> = {};
    const work = () => (result = this.dispatch(method, biz, params));
    if (await this.applyFault(fault, res, work)) return;
    if (typeof fault === 'object')
      return this.answer(res, method, {
        code: '40004',
        msg: 'Business Failed',
        sub_code: fault.business,
        sub_msg: fault.message ?? fault.business,
      });
    work();
    return this.answer(res, method, result);
  }

  /** In certificate mode, the sub_code Alipay refuses a request with when it names no or other certificates (its public error codes). */
  private checkCertSns(p: Record<string, string>): string | undefined {
    if (!this.certMode) return undefined;
    if (!p.app_cert_sn) return 'isv.missing-app-cert-sn';
    if (!p.alipay_root_cert_sn) return 'isv.missing-alipay-root-cert-sn';
    if (p.app_cert_sn !== this.certMode.app_cert_sn) return 'isv.app-cert-not-exist';
    if (p.alipay_root_cert_sn !== this.certMode.alipay_root_cert_sn) return 'isv.invalid-alipay-root-cert-sn';
    return undefined;
  }

  private checkRequest(p: Record<string, string>): string | undefined {
    if (p.app_id !== this.app_id) return `unknown app_id ${p.app_id}`;
    if (p.sign_type !== 'RSA2' || p.charset !== 'utf-8' || p.version !== '1.0')
      return 'sign_type, charset or version wrong';
    const ok = createVerify('RSA-SHA256')
      .update(joined(p, ['sign']), 'utf8')
      .verify(keyOf(this.app.publicKey), p.sign ?? '', 'base64');
    if (!ok) return 'the request signature does not verify with the app public key';
    // Alipay's timestamp is Beijing time: one written in another zone is hours off.
    const sent = Date.parse(`${(p.timestamp ?? '').replace(' ', 'T')}+08:00`);
    if (!Number.isFinite(sent) || Math.abs(sent - Date.now()) > 10 * 60_000)
      return `timestamp ${p.timestamp} is not now in GMT+8`;
    return undefined;
  }

  /** One call's business answer (code 10000, or a 40004 failure). */
  private dispatch(
    method: string,
    biz: Record<string, string>,
    params: Record<string, string>,
  ): Record<string, unknown> {
    const fail = (sub_code: string, sub_msg = sub_code) => ({
      code: '40004',
      msg: 'Business Failed',
      sub_code,
      sub_msg,
    });
    const ok = (fields: Record<string, unknown>) => ({ code: '10000', msg: 'Success', ...fields });
    const t = this.trades.get(biz.out_trade_no ?? '');
    switch (method) {
      case 'alipay.trade.precreate': {
        if (!/^\d+\.\d{2}$/.test(biz.total_amount ?? '') || !biz.subject || !biz.out_trade_no)
          return fail('ACQ.INVALID_PARAMETER');
        if (t) {
          if (t.trade_status === 'TRADE_SUCCESS') return fail('ACQ.TRADE_HAS_SUCCESS');
          if (t.trade_status === 'TRADE_CLOSED') return fail('ACQ.TRADE_HAS_CLOSE');
          if (t.total_amount !== biz.total_amount || t.subject !== biz.subject) return fail('ACQ.CONTEXT_INCONSISTENT');
          return ok({ out_trade_no: t.out_trade_no, qr_code: t.qr_code });
        }
        const trade = this.newTrade(biz, params.notify_url ?? '', 'precreate', false);
        return ok({ out_trade_no: trade.out_trade_no, qr_code: trade.qr_code });
      }
      case 'alipay.trade.query':
        if (!t || !t.exists) return fail('ACQ.TRADE_NOT_EXIST');
        return ok({
          out_trade_no: t.out_trade_no,
          trade_no: t.trade_no,
          trade_status: t.trade_status,
          total_amount: t.total_amount,
          ...(t.trans_currency && { trans_currency: t.trans_currency }),
        });
      case 'alipay.trade.close':
        if (!t || !t.exists) return fail('ACQ.TRADE_NOT_EXIST');
        if (t.trade_status !== 'WAIT_BUYER_PAY') return fail('ACQ.TRADE_STATUS_ERROR');
        t.trade_status = 'TRADE_CLOSED';
        return ok({ out_trade_no: t.out_trade_no, trade_no: t.trade_no });
      case 'alipay.trade.cancel': {
        const trade =
          t ?? this.newTrade({ out_trade_no: biz.out_trade_no, total_amount: '0.00', subject: '' }, '', 'cancel', true);
        trade.exists = true;
        const action = trade.trade_status === 'TRADE_SUCCESS' ? 'refund' : 'close';
        trade.trade_status = 'TRADE_CLOSED';
        return ok({ out_trade_no: trade.out_trade_no, retry_flag: 'N', action });
      }
      case 'alipay.trade.refund': {
        if (!t || !t.exists) return fail('ACQ.TRADE_NOT_EXIST');
        if (t.trade_status !== 'TRADE_SUCCESS') return fail('ACQ.TRADE_STATUS_ERROR');
        const made = t.refunds.get(biz.out_request_no ?? '');
        const total = () => [...t.refunds.values()].reduce((s, a) => s + cents(a), 0);
        if (made !== undefined) {
          if (made !== biz.refund_amount)
            return fail('ACQ.INVALID_PARAMETER', 'out_request_no reused with another amount');
          return ok({ fund_change: 'N', refund_fee: yuan(total()), out_trade_no: t.out_trade_no });
        }
        if (!/^\d+\.\d{2}$/.test(biz.refund_amount ?? '') || total() + cents(biz.refund_amount) > cents(t.total_amount))
          return fail('ACQ.REFUND_AMT_NOT_EQUAL_TOTAL');
        t.refunds.set(biz.out_request_no, biz.refund_amount);
        t.refundTimes.set(biz.out_request_no, Date.now());
        return ok({
          fund_change: 'Y',
          refund_fee: yuan(total()),
          out_trade_no: t.out_trade_no,
          gmt_refund_pay: beijing(),
        });
      }
      case 'alipay.trade.fastpay.refund.query': {
        const amount = t?.refunds.get(biz.out_request_no ?? '');
        return ok({
          out_trade_no: biz.out_trade_no,
          out_request_no: biz.out_request_no,
          ...(amount !== undefined && { refund_status: 'REFUND_SUCCESS', refund_amount: amount }),
        });
      }
      case 'alipay.data.dataservice.bill.downloadurl.query':
        if (biz.bill_type !== 'trade' || !/^\d{4}-\d{2}-\d{2}$/.test(biz.bill_date ?? ''))
          return fail('isv.invalid_arguments');
        if (!this.billReady) return fail('isp.bill_not_exist', '账单不存在');
        return ok({ bill_download_url: `${this.url}/fake/bill/${biz.bill_date}.csv.zip` });
      default:
        return { code: '40004', msg: 'Business Failed', sub_code: 'isv.invalid-method', sub_msg: method };
    }
  }

  private newTrade(biz: Record<string, string>, notify_url: string, product: string, exists: boolean): AlipayTrade {
    const n = ++this.seq;
    const trade: AlipayTrade = {
      out_trade_no: biz.out_trade_no,
      trade_no: `2026112422001${String(n).padStart(8, '0')}`,
      total_amount: biz.total_amount,
      subject: biz.subject ?? '',
      trans_currency: this.takesCurrency ? (biz.trans_currency ?? null) : null,
      qr_code: `https://qr.alipay.com/bax0${n}fake`,
      notify_url,
      exists,
      trade_status: 'WAIT_BUYER_PAY',
      refunds: new Map(),
      refundTimes: new Map(),
      product,
    };
    this.trades.set(trade.out_trade_no, trade);
    this.opened(trade.out_trade_no);
    return trade;
  }

  /** The answer's JSON with the response object signed by "Alipay", exactly as sent. */
  private answer(res: ServerResponse, method: string, content: Record<string, unknown>, signed = true): void {
    const inner = JSON.stringify(content);
    const root = content.code === '40002' ? 'error_response' : `${method.replaceAll('.', '_')}_response`;
    const certSn = this.certMode ? `"alipay_cert_sn":"${this.certMode.alipay_cert_sn}",` : '';
    const body = signed
      ? `{"${root}":${inner},${certSn}"sign":"${sign(this.alipay.privateKey, inner)}"}`
      : `{"${root}":${inner}}`;
    res.writeHead(200, { 'content-type': 'text/html;charset=utf-8' }).end(body);
  }

  /** Alipay's mobile payment page (wap.pay): opening it creates the trade; its button pays. */
  private wapPage(params: Record<string, string>, biz: Record<string, string>, res: ServerResponse): void {
    const t = this.trades.get(biz.out_trade_no) ?? this.newTrade(biz, params.notify_url ?? '', 'wap.pay', true);
    t.exists = true;
    const esc = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      .end(`<!doctype html><title>Fake Alipay</title><h1 id="fake-alipay">Alipay</h1>
<p id="fake-amount">${esc(t.total_amount)}</p><p id="fake-subject">${esc(t.subject)}</p>
<form method="post" action="/fake/wap-pay"><input type="hidden" name="out_trade_no" value="${esc(t.out_trade_no)}"><input type="hidden" name="return_url" value="${esc(params.return_url ?? '')}"><button id="fake-pay">Pay</button></form>`);
  }

  private async wapPaid(req: RawRequest, res: ServerResponse): Promise<void> {
    const form = new URLSearchParams(req.body);
    const t = this.trades.get(form.get('out_trade_no') ?? '');
    if (!t) return void res.writeHead(404).end();
    await this.pay(t.out_trade_no);
    const back = new URL(form.get('return_url')!);
    back.searchParams.set('out_trade_no', t.out_trade_no);
    back.searchParams.set('trade_no', t.trade_no);
    res.writeHead(303, { location: back.toString() }).end();
  }

  /** The customer scans a precreated QR: Alipay creates the trade. */
  scan(out_trade_no: string): AlipayTrade {
    const t = this.trades.get(out_trade_no);
    if (!t) throw new Error(`no trade ${out_trade_no}`);
    t.exists = true;
    return t;
  }

  /** The customer pays; Alipay notifies (unless `notify` is false), `times` times. */
  async pay(out_trade_no: string, opts: { notify?: boolean; times?: number } = {}): Promise<AlipayTrade> {
    const t = this.scan(out_trade_no);
    t.trade_status = 'TRADE_SUCCESS';
    t.paid_at ??= Date.now();
    if (opts.notify !== false) for (let i = 0; i < (opts.times ?? 1); i++) await this.notify(out_trade_no);
    return t;
  }

  /** The signed form fields of a notification of the trade as it stands (or as `over` says). */
  notificationFields(out_trade_no: string, over: Record<string, string> = {}): Record<string, string> {
    const t = this.trades.get(out_trade_no)!;
    const fields: Record<string, string> = {
      notify_time: beijing(),
      notify_type: 'trade_status_sync',
      notify_id: `ac05099524730693a8b330c45cf72da9${++this.seq}`,
      app_id: this.app_id,
      charset: 'utf-8',
      version: '1.0',
      sign_type: 'RSA2',
      trade_no: t.trade_no,
      out_trade_no: t.out_trade_no,
      trade_status: t.trade_status,
      total_amount: t.total_amount,
      receipt_amount: t.total_amount,
      buyer_pay_amount: t.total_amount,
      subject: t.subject,
      gmt_create: beijing(),
      gmt_payment: beijing(),
      buyer_id: '2088102177846880',
      seller_id: '2088102177649450',
      fund_bill_list: `[{"amount":"${t.total_amount}","fundChannel":"ALIPAYACCOUNT"}]`,
      ...(t.trans_currency && this.notificationNamesCurrency && { trans_currency: t.trans_currency }),
      ...over,
    };
    fields.sign = sign(this.alipay.privateKey, joined(fields, ['sign', 'sign_type']));
    return fields;
  }

  /** Sends a notification to the trade's notify_url; the gateway's answer. */
  async notify(out_trade_no: string, fields = this.notificationFields(out_trade_no)): Promise<string> {
    const t = this.trades.get(out_trade_no)!;
    const answer = await deliver(t.notify_url, new URLSearchParams(fields).toString(), {
      'content-type': 'application/x-www-form-urlencoded; charset=utf-8',
    });
    this.notifications.push({ out_trade_no, trade_status: fields.trade_status ?? '', answer: answer.body });
    return answer.body;
  }

  private *billTrades() {
    for (const t of this.trades.values())
      yield {
        trade_no: t.trade_no,
        out_trade_no: t.out_trade_no,
        subject: t.subject,
        amount: t.total_amount,
        ...(t.paid_at !== undefined && { paid_at: t.paid_at }),
        refunds: [...t.refunds].map(([out_request_no, amount]) => ({
          out_request_no,
          amount,
          at: t.refundTimes.get(out_request_no) ?? Date.now(),
        })),
      };
  }

  /** The refunds made of a trade, by out_request_no. */
  refundsOf(out_trade_no: string): Map<string, string> {
    return this.trades.get(out_trade_no)?.refunds ?? new Map();
  }
}

/** test/fixtures/alipay-cert-mode: certificates made for these tests, their keys, and their SNs computed apart from the gateway's code. */
export const CERT_MODE_FIXTURES = {
  dir: fileURLToPath(new URL('../fixtures/alipay-cert-mode/', import.meta.url)),
  file(name: string): string {
    return readFileSync(`${this.dir}${name}`, 'utf8');
  },
  expected(): { app_cert_sn: string; alipay_root_cert_sn: string; alipay_cert_sn: string } {
    return JSON.parse(this.file('expected.json')) as {
      app_cert_sn: string;
      alipay_root_cert_sn: string;
      alipay_cert_sn: string;
    };
  },
};

function publicKeyOfCert(pem: string): string {
  return new X509Certificate(pem).publicKey.export({ type: 'spki', format: 'pem' }).toString();
}

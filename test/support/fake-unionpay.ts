// A fake UnionPay ACP gateway (5.1.0) on 127.0.0.1, as UnionPay's SDKs describe it
// (docs/providers/protocols/unionpay.md), with certificates made here: a root and a middle CA,
// UnionPay's signing certificate under them (its CN naming 中国银联股份有限公司), and the
// merchant's key and certificate in a PKCS#12 file with a password. Every request's signature is
// checked with the merchant's certificate (by its certId); every answer and notification is signed
// with UnionPay's, which it carries. The cashier is a page of its own that posts back to frontUrl.
import { createHash, sign, verify, X509Certificate } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import forge from 'node-forge';
import { signingText } from '../../src/connectors/unionpay/sign.js';
import { deliver, FakeServer, keyPair, type RawRequest } from './fake-server.js';
import { clearingDay, zmFile, zmFileContent, type ZmEdits, type ZmTransaction } from './fake-unionpay-zm.js';

interface Made {
  cert: forge.pki.Certificate;
  key: forge.pki.rsa.PrivateKey;
  pem: string;
}

function certificate(
  subject: forge.pki.CertificateField[],
  key: { privateKey: string; publicKey: string },
  issuer: Made | undefined,
  serial: string,
  opts: { ca: boolean; notAfter?: Date },
): Made {
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(key.publicKey);
  cert.serialNumber = serial;
  cert.validity.notBefore = new Date(Date.now() - 86_400_000);
  cert.validity.notAfter = opts.notAfter ?? new Date(Date.now() + 5 * 365 * 86_400_000);
  cert.setSubject(subject);
  cert.setIssuer(issuer ? issuer.cert.subject.attributes : subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: opts.ca },
    { name: 'keyUsage', digitalSignature: true, keyCertSign: opts.ca },
  ]);
  const privateKey = forge.pki.privateKeyFromPem(key.privateKey);
  cert.sign(issuer ? issuer.key : privateKey, forge.md.sha256.create());
  return { cert, key: privateKey, pem: forge.pki.certificateToPem(cert) };
}

export interface Consume {
  orderId: string;
  txnTime: string;
  txnAmt: string;
  currencyCode: string;
  frontUrl: string;
  backUrl: string;
  status: 'waiting' | 'paid' | 'failed';
  queryId?: string;
  paidAt?: number;
}

export interface BackTxn {
  txnType: '04' | '31';
  orderId: string;
  txnTime: string;
  txnAmt: string;
  origQryId: string;
  status: 'processing' | 'succeeded' | 'failed';
  queryId: string;
  at: number;
}

const UNIONPAY_CN = '041@8310000000083040@中国银联股份有限公司@00016495';

export class FakeUnionpay extends FakeServer {
  readonly mer_id = '777290058110048';
  readonly pfxPassword = '000000';
  readonly root: Made;
  readonly middle: Made;
  readonly unionpay: Made;
  readonly merchant: Made;
  /** The merchant's .pfx, base64. */
  readonly pfx: string;
  readonly merchantCertId: string;
  readonly consumes = new Map<string, Consume>();
  readonly backs = new Map<string, BackTxn>();
  readonly refused: string[] = [];
  /** Refunds finish at once, or stay in progress (05) until `finishRefunds`. */
  refundsComplete = true;
  /** UnionPay asks for a revoke, not a refund, of a whole consume (as on the day it was paid). */
  revokeSameDay = false;
  /** Answers signed with a certificate that is not UnionPay's (a forger's), or not signed. */
  answers: 'ok' | 'foreign' | 'unsigned' = 'ok';
  private queryIds = 782209081322060674000n;
  private readonly foreign: Made;

  private constructor() {
    super();
    const o = (cn: string): forge.pki.CertificateField[] => [
      { name: 'countryName', value: 'CN' },
      { name: 'organizationName', value: 'Test CFCA' },
      { name: 'commonName', value: cn },
    ];
    this.root = certificate(o('Test CFCA CS CA'), keyPair(10), undefined, '01', { ca: true });
    this.middle = certificate(o('Test CFCA OCA1'), keyPair(11), this.root, '02', { ca: true });
    this.unionpay = certificate(
      [
        { name: 'countryName', value: 'cn' },
        { name: 'commonName', value: UNIONPAY_CN, valueTagClass: forge.asn1.Type.UTF8 as never },
      ],
      keyPair(12),
      this.middle,
      '1039308534',
      { ca: false },
    );
    this.merchant = certificate(
      o('041@Z2026-11-29@777290058110048:SIGN@00000006'),
      keyPair(13),
      this.middle,
      '1002653215',
      { ca: false },
    );
    // A certificate of the same form from another CA: what a forger could make.
    const elsewhere = certificate(o('Elsewhere CA'), keyPair(14), undefined, '03', { ca: true });
    this.foreign = certificate(
      [{ name: 'commonName', value: UNIONPAY_CN, valueTagClass: forge.asn1.Type.UTF8 as never }],
      keyPair(15),
      elsewhere,
      '04',
      { ca: false },
    );
    const p12 = forge.pkcs12.toPkcs12Asn1(this.merchant.key, [this.merchant.cert], this.pfxPassword, {
      algorithm: '3des',
    });
    this.pfx = forge.util.encode64(forge.asn1.toDer(p12).getBytes());
    this.merchantCertId = BigInt(`0x${new X509Certificate(this.merchant.pem).serialNumber}`).toString(10);
  }

  static async start(): Promise<FakeUnionpay> {
    const fake = new FakeUnionpay();
    await fake.listen();
    return fake;
  }

  /** UnionPay's signed message: its certificate as signPubKeyCert (lines ended with CR LF, as UnionPay's are). */
  signed(fields: Record<string, string>, by: Made = this.unionpay): Record<string, string> {
    const withCert = { ...fields, signPubKeyCert: by.pem.trim().replace(/\r?\n/g, '\r\n') };
    const hex = createHash('sha256').update(signingText(withCert), 'utf8').digest('hex');
    const pem = forge.pki.privateKeyToPem(by.key);
    return { ...withCert, signature: sign('sha256', Buffer.from(hex, 'utf8'), pem).toString('base64') };
  }

  private answer(res: ServerResponse, fields: Record<string, string>): void {
    const out =
      this.answers === 'unsigned'
        ? fields
        : this.answers === 'foreign'
          ? this.signed(fields, this.foreign)
          : this.signed(fields);
    // Not URL-encoded: UnionPay's answers are `k=v&k=v`.
    const text = Object.entries(out)
      .map(([k, v]) => `${k}=${v}`)
      .join('&');
    res.writeHead(200, { 'content-type': 'text/plain;charset=UTF-8' }).end(text);
  }

  /** Why a request is not the merchant's, or undefined. */
  private unsigned(f: Record<string, string>): string | undefined {
    if (f.version !== '5.1.0' || f.signMethod !== '01') return `version ${f.version} signMethod ${f.signMethod}`;
    if (f.merId !== this.mer_id) return `merId ${f.merId}`;
    if (f.certId !== this.merchantCertId) return `certId ${f.certId}, not ${this.merchantCertId}`;
    const hex = createHash('sha256').update(signingText(f), 'utf8').digest('hex');
    const ok = verify('sha256', Buffer.from(hex, 'utf8'), this.merchant.pem, Buffer.from(f.signature ?? '', 'base64'));
    return ok ? undefined : 'bad signature';
  }

  /** The customer pays at the cashier: the consume is paid and its back notification sent (unless told not to). */
  async pay(orderId: string, opts: { notify?: boolean; fail?: boolean } = {}): Promise<{ status: number } | undefined> {
    const c = this.consumes.get(orderId);
    if (!c) throw new Error(`no consume ${orderId}`);
    c.status = opts.fail ? 'failed' : 'paid';
    c.queryId = String(this.queryIds++);
    c.paidAt = Date.now();
    if (opts.fail || opts.notify === false) return undefined;
    return this.notify(c);
  }

  notificationFields(c: Consume): Record<string, string> {
    return {
      version: '5.1.0',
      encoding: 'UTF-8',
      signMethod: '01',
      accessType: '0',
      bizType: '000201',
      txnType: '01',
      txnSubType: '01',
      merId: this.mer_id,
      orderId: c.orderId,
      txnTime: c.txnTime,
      txnAmt: c.txnAmt,
      currencyCode: c.currencyCode,
      queryId: c.queryId ?? '',
      respCode: '00',
      respMsg: 'success',
      settleAmt: c.txnAmt,
      settleCurrencyCode: c.currencyCode,
      settleDate: c.txnTime.slice(4, 8),
      traceNo: '067402',
      traceTime: c.txnTime.slice(4),
    };
  }

  /** POSTs the back notification (signed by `by`, UnionPay's by default) to the consume's backUrl. */
  notify(
    c: Consume,
    opts: { by?: 'unionpay' | 'foreign' | 'merchant'; tamper?: boolean } = {},
  ): Promise<{ status: number; body: string }> {
    const by = opts.by === 'foreign' ? this.foreign : opts.by === 'merchant' ? this.merchant : this.unionpay;
    const fields = this.signed(this.notificationFields(c), by);
    if (opts.tamper) fields.txnAmt = String(Number(fields.txnAmt) + 1);
    return deliver(c.backUrl, new URLSearchParams(fields).toString(), {
      'content-type': 'application/x-www-form-urlencoded',
    });
  }

  finishRefunds(): void {
    for (const b of this.backs.values()) if (b.status === 'processing') b.status = 'succeeded';
  }

  protected async handle(req: RawRequest, res: ServerResponse): Promise<void> {
    const path = req.url.pathname;
    const f = Object.fromEntries(new URLSearchParams(req.body));
    if (req.method === 'POST' && path === '/gateway/api/frontTransReq.do') {
      this.calls.push('front');
      const why = this.unsigned(f);
      if (why) {
        this.refused.push(`front: ${why}`);
        return void res
          .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
          .end(`<h1 id="refused">${why}</h1>`);
      }
      if (
        f.txnType !== '01' ||
        !/^[0-9A-Za-z]{8,32}$/.test(f.orderId ?? '') ||
        !/^\d+$/.test(f.txnAmt ?? '') ||
        !f.frontUrl ||
        !f.backUrl
      )
        this.refused.push(`front: a consume of the wrong form ${JSON.stringify(f)}`);
      const c: Consume = this.consumes.get(f.orderId) ?? {
        orderId: f.orderId,
        txnTime: f.txnTime,
        txnAmt: f.txnAmt,
        currencyCode: f.currencyCode,
        frontUrl: f.frontUrl,
        backUrl: f.backUrl,
        status: 'waiting',
      };
      this.consumes.set(c.orderId, c);
      this.opened(c.orderId);
      // The cashier: a button back to the shop, which posts the front notification to frontUrl.
      const back = this.signed({ ...this.notificationFields(c), respCode: c.status === 'paid' ? '00' : '01' });
      const hidden = Object.entries(back)
        .map(([k, v]) => `<input type="hidden" name="${k}" value="${v.replaceAll('"', '&quot;')}">`)
        .join('');
      return void res
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end(
          `<!doctype html><title>UnionPay</title><link rel="icon" href="data:,"><h1 id="unionpay">UnionPay ${c.txnAmt} (${c.currencyCode})</h1><form id="back-form" method="post" action="${c.frontUrl}">${hidden}<button id="back" type="submit">Back to the shop</button></form>`,
        );
    }
    if (req.method === 'POST' && path === '/gateway/api/queryTrans.do') {
      this.calls.push('query');
      const fault = this.takeFault('query');
      if (await this.applyFault(fault, res, () => {})) return;
      const why = this.unsigned(f);
      if (why) {
        this.refused.push(`query: ${why}`);
        return this.answer(res, { respCode: '11', respMsg: '验证签名失败' });
      }
      const base = {
        version: '5.1.0',
        encoding: 'UTF-8',
        signMethod: '01',
        merId: this.mer_id,
        orderId: f.orderId,
        txnTime: f.txnTime,
      };
      const c = this.consumes.get(f.orderId);
      if (c) this.asked(c.orderId);
      if (c && c.txnTime === f.txnTime) {
        const orig = c.status === 'paid' ? '00' : c.status === 'failed' ? '01' : '05';
        return this.answer(res, {
          ...base,
          txnType: '01',
          respCode: '00',
          respMsg: '成功',
          origRespCode: orig,
          origRespMsg: orig === '00' ? 'success' : orig,
          txnAmt: c.txnAmt,
          currencyCode: c.currencyCode,
          queryId: c.queryId ?? '',
        });
      }
      const b = this.backs.get(f.orderId);
      if (b && b.txnTime === f.txnTime) {
        const orig = b.status === 'succeeded' ? '00' : b.status === 'failed' ? '01' : '05';
        return this.answer(res, {
          ...base,
          txnType: b.txnType,
          respCode: '00',
          respMsg: '成功',
          origRespCode: orig,
          txnAmt: b.txnAmt,
        });
      }
      return this.answer(res, { ...base, respCode: '34', respMsg: '查无此交易' });
    }
    if (req.method === 'POST' && path === '/gateway/api/backTransReq.do') {
      this.calls.push(f.txnType === '31' ? 'revoke' : 'refund');
      const fault = this.takeFault('refund');
      let fields: Record<string, string> | undefined;
      const work = () => (fields = this.back(f));
      if (await this.applyFault(fault, res, work)) return;
      const why = this.unsigned(f);
      if (why) {
        this.refused.push(`back: ${why}`);
        return this.answer(res, { respCode: '11', respMsg: '验证签名失败' });
      }
      work();
      return this.answer(res, fields!);
    }
    if (req.method === 'POST' && path === '/' && f.txnType === '76') {
      this.calls.push('file');
      const why = this.unsigned(f);
      if (why) {
        this.refused.push(`file: ${why}`);
        return this.answer(res, { respCode: '11', respMsg: '验证签名失败' });
      }
      return this.answer(res, this.file(f));
    }
    return void res.writeHead(404).end('no such path');
  }

  /** The merchant's file of a clearing day is made (else the file transfer answers that there is none yet). */
  fileReady = true;
  /** What the ZM file gets wrong on purpose. */
  zmEdits: ZmEdits = {};

  /** The file transfer (txnType 76, fileType 00): the clearing day's zip, the latest settleDate MMDD not ahead. */
  private file(f: Record<string, string>): Record<string, string> {
    const base = { version: '5.1.0', encoding: 'UTF-8', signMethod: '01', txnType: '76', merId: this.mer_id };
    if (f.fileType !== '00' || f.txnSubType !== '01' || f.merId !== this.mer_id || !/^\d{4}$/.test(f.settleDate ?? ''))
      return { ...base, respCode: '30', respMsg: '报文格式错误' };
    const today = clearingDay(Date.now());
    let day = today.slice(0, 4) + f.settleDate;
    if (day > today) day = String(Number(today.slice(0, 4)) - 1) + f.settleDate;
    if (!this.fileReady) return { ...base, respCode: '98', respMsg: '文件不存在' };
    const transactions: ZmTransaction[] = [
      ...[...this.consumes.values()]
        .filter((c) => c.status === 'paid')
        .map((c) => ({
          txnType: '01' as const,
          orderId: c.orderId,
          queryId: c.queryId!,
          txnAmt: Number(c.txnAmt),
          at: c.paidAt!,
        })),
      ...[...this.backs.values()]
        .filter((b) => b.status === 'succeeded')
        .map((b) => ({
          txnType: b.txnType,
          orderId: b.orderId,
          queryId: b.queryId,
          txnAmt: Number(b.txnAmt),
          origQryId: b.origQryId,
          at: b.at,
        })),
    ];
    const zm = zmFile(this.mer_id, day, transactions, this.zmEdits);
    return {
      ...base,
      respCode: '00',
      respMsg: '成功',
      settleDate: f.settleDate,
      fileType: '00',
      fileName: `${this.mer_id}_${day}.zip`,
      fileContent: zmFileContent(this.mer_id, day, zm),
    };
  }

  private back(f: Record<string, string>): Record<string, string> {
    const base = {
      version: '5.1.0',
      encoding: 'UTF-8',
      signMethod: '01',
      merId: this.mer_id,
      orderId: f.orderId,
      txnTime: f.txnTime,
      txnType: f.txnType,
    };
    const again = this.backs.get(f.orderId);
    if (again)
      return {
        ...base,
        respCode: again.txnTime === f.txnTime ? '00' : '12',
        respMsg: again.txnTime === f.txnTime ? '成功' : '重复交易',
      };
    const c = [...this.consumes.values()].find((x) => x.queryId === f.origQryId && x.status === 'paid');
    if (!c) return { ...base, respCode: '35', respMsg: '原交易不存在或状态不正确' };
    const done = [...this.backs.values()]
      .filter((b) => b.origQryId === f.origQryId && b.status !== 'failed')
      .reduce((s, b) => s + Number(b.txnAmt), 0);
    if (Number(f.txnAmt) > Number(c.txnAmt) - done) return { ...base, respCode: '36', respMsg: '与原交易信息不符' };
    if (f.txnType === '04' && this.revokeSameDay && Number(f.txnAmt) === Number(c.txnAmt))
      return { ...base, respCode: '12', respMsg: '当日全额退货请发起消费撤销' };
    if (f.txnType === '31' && Number(f.txnAmt) !== Number(c.txnAmt))
      return { ...base, respCode: '36', respMsg: '撤销金额须与原消费金额相同' };
    const queryId = String(this.queryIds++);
    this.backs.set(f.orderId, {
      txnType: f.txnType as '04' | '31',
      orderId: f.orderId,
      txnTime: f.txnTime,
      txnAmt: f.txnAmt,
      origQryId: f.origQryId,
      status: this.refundsComplete ? 'succeeded' : 'processing',
      queryId,
      at: Date.now(),
    });
    return { ...base, respCode: '00', respMsg: '成功', queryId };
  }
}

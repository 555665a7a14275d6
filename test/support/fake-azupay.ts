// A fake Azupay (the PaymentRequest API) on 127.0.0.1, as its documentation describes it
// (docs/providers/protocols/azupay.md): the API key as the Authorization header on every call
// (anything else refused and recorded), create with only the schema's fields and a unique
// clientTransactionId, request ids in base64 with `+`, `/` and `=`, GET and DELETE by a query id,
// search, partial refunds one at a time, and the webhook carrying the Authorization value each
// request was given.
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { deliver, FakeServer, type RawRequest } from './fake-server.js';

export interface AzupayRequest {
  paymentRequestId: string;
  clientTransactionId: string;
  payID: string;
  paymentAmount: number;
  paymentDescription: string;
  paymentExpiryDatetime: string;
  notifyUrl: string;
  notifyAuthorization: string;
  status: 'WAITING' | 'COMPLETE' | 'EXPIRED' | 'RETURN_IN_PROGRESS' | 'RETURN_COMPLETE' | 'RETURN_FAILED';
  amountReceived?: number;
  returnInitiator?: 'AUTOMATIC' | 'MANUAL';
  failureReason?: string;
  /** When it was paid (COMPLETE): the search by completion date finds it by this. */
  completedAt?: number;
  refunds: { amount: string; status: 'IN_PROGRESS' | 'COMPLETE' | 'FAILED'; clientRefundID: string }[];
}

const ALLOWED = new Set([
  'payID',
  'payIDSuffix',
  'clientId',
  'clientBranch',
  'clientTransactionId',
  'multiPayment',
  'paymentAmount',
  'paymentDescription',
  'paymentExpiryDatetime',
  'paymentNotification',
  'ultimatePayeeName',
  'variant',
]);

export class FakeAzupay extends FakeServer {
  readonly client_id = 'GATEWAYTEST';
  readonly api_key = `SECR${randomBytes(12).toString('hex')}`;
  /** By paymentRequestId. */
  readonly requests = new Map<string, AzupayRequest>();
  readonly refused: string[] = [];
  /** How a refund ends: at once, or in progress until `finishRefunds`. */
  refundsComplete = true;

  static async start(): Promise<FakeAzupay> {
    const fake = new FakeAzupay();
    await fake.listen();
    return fake;
  }

  byReference(out_trade_no: string): AzupayRequest | undefined {
    return [...this.requests.values()].find((r) => r.clientTransactionId === out_trade_no);
  }

  /** The customer pays `amount` (the request's by default) to its PayID; Azupay returns a wrong amount by itself. */
  async pay(
    out_trade_no: string,
    opts: { amount?: number; notify?: boolean } = {},
  ): Promise<{ status: number } | undefined> {
    const r = this.byReference(out_trade_no);
    if (!r) throw new Error(`no Azupay request for ${out_trade_no}`);
    const amount = opts.amount ?? r.paymentAmount;
    if (Math.round(amount * 100) === Math.round(r.paymentAmount * 100)) {
      r.status = 'COMPLETE';
      r.amountReceived = amount;
      r.completedAt = Date.now();
    } else {
      r.status = 'RETURN_COMPLETE';
      r.returnInitiator = 'AUTOMATIC';
      r.completedAt = Date.now();
      r.failureReason = `Payment amount ${amount.toFixed(2)} does not match the requested amount`;
    }
    return opts.notify === false ? undefined : this.webhook(r);
  }

  async expire(out_trade_no: string, opts: { notify?: boolean } = {}): Promise<{ status: number } | undefined> {
    const r = this.byReference(out_trade_no)!;
    r.status = 'EXPIRED';
    return opts.notify === false ? undefined : this.webhook(r);
  }

  finishRefunds(): void {
    for (const r of this.requests.values())
      for (const f of r.refunds) if (f.status === 'IN_PROGRESS') f.status = 'COMPLETE';
    for (const r of this.requests.values()) if (r.status === 'RETURN_IN_PROGRESS') r.status = 'RETURN_COMPLETE';
  }

  record(r: AzupayRequest): Record<string, unknown> {
    const refunded = r.refunds
      .filter((f) => f.status !== 'FAILED')
      .reduce((s, f) => s + Math.round(Number(f.amount) * 100), 0);
    return {
      PaymentRequest: {
        clientId: this.client_id,
        clientTransactionId: r.clientTransactionId,
        payID: r.payID,
        paymentAmount: r.paymentAmount,
        paymentDescription: r.paymentDescription,
        paymentExpiryDatetime: r.paymentExpiryDatetime,
      },
      PaymentRequestStatus: {
        paymentRequestId: r.paymentRequestId,
        status: r.status,
        createdDateTime: new Date().toISOString(),
        ...(r.amountReceived !== undefined && { amountReceived: r.amountReceived }),
        ...(r.completedAt !== undefined && { completedDatetime: new Date(r.completedAt).toISOString() }),
        ...(r.returnInitiator && { returnInitiator: r.returnInitiator }),
        ...(r.failureReason && { failureReason: r.failureReason }),
        ...(r.refunds.length > 0 && {
          refundInformation: {
            availableBalance: ((Math.round((r.amountReceived ?? 0) * 100) - refunded) / 100).toFixed(2),
            requests: r.refunds.map((f) => ({ amount: f.amount, status: f.status, refundTrigger: 'REFUND_API' })),
          },
        }),
      },
    };
  }

  /** The most records a page of the search holds. */
  pageSize = 100;
  /** What the search by completion date gets wrong on purpose: requests left out, other amounts received (dollars). */
  searchEdits: { omit?: Set<string>; amounts?: Map<string, number>; extra?: AzupayRequest[] } = {};

  /** A page of the requests completed between fromDate and toDate (newest first), by numberOfRecords and nextPageId. */
  private completedBetween(search: Record<string, string>, q: URLSearchParams): Record<string, unknown> {
    const from = Date.parse(search.fromDate ?? '');
    const to = Date.parse(search.toDate ?? '');
    const size = Math.min(Number(q.get('numberOfRecords') ?? 100), this.pageSize);
    const start = Number(q.get('nextPageId') ?? 0);
    const all = [...this.requests.values(), ...(this.searchEdits.extra ?? [])]
      .filter((r) => r.completedAt !== undefined && r.completedAt >= from && r.completedAt <= to)
      .filter((r) => !this.searchEdits.omit?.has(r.clientTransactionId))
      .sort((a, b) => b.completedAt! - a.completedAt!)
      .map((r) => {
        const amount = this.searchEdits.amounts?.get(r.clientTransactionId);
        return this.record(amount === undefined ? r : { ...r, amountReceived: amount });
      });
    const records = all.slice(start, start + size);
    return {
      records,
      recordCount: records.length,
      ...(start + size < all.length && { nextPageId: String(start + size) }),
    };
  }

  /** POSTs the request's webhook with the Authorization it was given (or `authorization`, forged). */
  webhook(
    r: AzupayRequest,
    opts: { authorization?: string; body?: string } = {},
  ): Promise<{ status: number; body: string }> {
    return deliver(r.notifyUrl, opts.body ?? JSON.stringify(this.record(r)), {
      'content-type': 'application/json',
      authorization: opts.authorization ?? r.notifyAuthorization,
    });
  }

  protected async handle(req: RawRequest, res: ServerResponse): Promise<void> {
    const json = (status: number, body: unknown) =>
      void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    const error = (status: number, code: string, message: string) =>
      json(status, { message, details: { failureCode: code, failureReason: message } });
    if (req.headers.authorization !== this.api_key) {
      this.refused.push(`${req.method} ${req.url.pathname}: wrong API key`);
      return json(401, { message: 'Unauthorized' });
    }
    if (req.headers['content-type'] !== 'application/json')
      return error(400, 'ERR0.03', 'Content-Type request header must be application/json');
    const path = req.url.pathname;
    const id = req.url.searchParams.get('id') ?? '';
    if (req.method === 'POST' && path === '/v1/paymentRequest') {
      this.calls.push('create');
      const fault = this.takeFault('create');
      if (typeof fault === 'object') return error(400, fault.business, fault.message ?? 'refused');
      let made: AzupayRequest | undefined;
      const work = () => (made = this.create(JSON.parse(req.body) as Record<string, unknown>));
      if (await this.applyFault(fault, res, work)) return;
      try {
        work();
      } catch (e) {
        const message = (e as Error).message;
        if (!message.startsWith('Duplicate')) this.refused.push(`create: ${message}`);
        return error(400, 'ERR0.03', message);
      }
      this.opened(made!.clientTransactionId);
      return json(200, this.record(made!));
    }
    if (req.method === 'POST' && path === '/v1/paymentRequest/search') {
      this.calls.push('search');
      const search = (JSON.parse(req.body) as { PaymentRequestSearch?: Record<string, string> }).PaymentRequestSearch;
      if (search?.searchByDateType === 'COMPLETED_DESC')
        return json(200, this.completedBetween(search, req.url.searchParams));
      const want = search?.clientTransactionId;
      const records = [...this.requests.values()]
        .filter((r) => r.clientTransactionId === want)
        .map((r) => this.record(r));
      return json(200, { records, recordCount: records.length });
    }
    if (req.method === 'GET' && path === '/v1/paymentRequest') {
      this.calls.push('get');
      const fault = this.takeFault('get');
      if (await this.applyFault(fault, res, () => {})) return;
      const r = this.requests.get(id);
      if (r) this.asked(r.clientTransactionId);
      return r ? json(200, this.record(r)) : error(400, 'ERR0.03', `paymentRequestId: ${id} not found`);
    }
    if (req.method === 'DELETE' && path === '/v1/paymentRequest') {
      this.calls.push('delete');
      const r = this.requests.get(id);
      if (!r) return error(400, 'ERR0.03', `paymentRequestId: ${id} not found`);
      if (r.status !== 'WAITING') return error(400, 'ERR0.03', `payment request is ${r.status}`);
      this.requests.delete(id);
      return void res.writeHead(204).end();
    }
    if (req.method === 'POST' && path === '/v1/paymentRequest/refund') {
      this.calls.push('refund');
      const fault = this.takeFault('refund');
      let answer: Record<string, unknown> | undefined;
      const work = () => (answer = this.refund(id, req.url.searchParams));
      if (await this.applyFault(fault, res, work)) return;
      try {
        work();
      } catch (e) {
        const [code, message] = (e as Error).message.split('|');
        return error(code === 'NOT_FOUND' ? 404 : 400, code, message);
      }
      return json(200, answer);
    }
    return json(404, { message: `no ${req.method} ${path}` });
  }

  private create(b: Record<string, unknown>): AzupayRequest {
    const p = b.PaymentRequest as Record<string, unknown> | undefined;
    if (!p || Object.keys(b).length !== 1) throw new Error('An invalid request body was supplied');
    const extra = Object.keys(p).filter((k) => !ALLOWED.has(k));
    if (extra.length)
      throw new Error(`[object instance has properties which are not allowed by the schema: ${JSON.stringify(extra)}]`);
    const text = (k: string) => (typeof p[k] === 'string' ? p[k] : '');
    if (p.clientId !== this.client_id) throw new Error('clientId is not this client');
    const tx = text('clientTransactionId');
    if (tx.length < 5 || tx.length > 100) throw new Error('clientTransactionId must be 5 to 100 characters');
    if ([...this.requests.values()].some((r) => r.clientTransactionId === tx))
      throw new Error(`Duplicate clientTransactionId ${tx}`);
    const desc = text('paymentDescription');
    if (desc.length < 5 || desc.length > 140) throw new Error('paymentDescription must be 5 to 140 characters');
    const amount = p.paymentAmount;
    if (typeof amount !== 'number' || amount < 0.01 || Math.abs(Math.round(amount * 100) - amount * 100) > 1e-9)
      throw new Error('paymentAmount must be a number of cents, at least 0.01');
    if (!Number.isFinite(Date.parse(text('paymentExpiryDatetime'))))
      throw new Error('paymentExpiryDatetime is not a date-time');
    const n = p.paymentNotification as Record<string, unknown> | undefined;
    if (
      typeof n?.paymentNotificationEndpointUrl !== 'string' ||
      typeof n.paymentNotificationAuthorizationHeaderValue !== 'string'
    )
      throw new Error('paymentNotification needs its endpoint and its Authorization value');
    if (n.paymentNotificationAuthorizationHeaderValue === this.api_key)
      throw new Error('the webhook Authorization must not be the API key');
    // An id with '+', '/' and '=' in it, as Azupay's are.
    const paymentRequestId = `${randomBytes(20).toString('base64').slice(0, 20)}+/${randomBytes(8).toString('base64').replace(/=+$/, '')}=`;
    const r: AzupayRequest = {
      paymentRequestId,
      clientTransactionId: tx,
      payID: `${randomBytes(5).toString('hex')}@${text('payIDSuffix') || 'pay.azupay-test.com.au'}`,
      paymentAmount: amount,
      paymentDescription: desc,
      paymentExpiryDatetime: text('paymentExpiryDatetime'),
      notifyUrl: n.paymentNotificationEndpointUrl,
      notifyAuthorization: n.paymentNotificationAuthorizationHeaderValue,
      status: 'WAITING',
      refunds: [],
    };
    this.requests.set(paymentRequestId, r);
    return r;
  }

  private refund(id: string, q: URLSearchParams): Record<string, unknown> {
    const r = this.requests.get(id);
    if (!r) throw new Error('NOT_FOUND|Payment Request Not Found');
    const clientRefundID = q.get('clientRefundID') ?? '';
    const again = r.refunds.find((f) => f.clientRefundID && f.clientRefundID === clientRefundID);
    if (again) return this.record(r);
    if (!['COMPLETE', 'RETURN_COMPLETE', 'RETURN_FAILED'].includes(r.status))
      throw new Error('ERR0.08|Refunds can only be done on COMPLETE, RETURN_COMPLETE or RETURN_FAILED payments');
    const amountText = q.get('refundAmount');
    const cents =
      amountText === null ? Math.round((r.amountReceived ?? 0) * 100) : Math.round(Number(amountText) * 100);
    if (!Number.isFinite(cents) || cents <= 0) throw new Error('ERR0.06|Refund amount value must be a number');
    const refunded = r.refunds
      .filter((f) => f.status !== 'FAILED')
      .reduce((s, f) => s + Math.round(Number(f.amount) * 100), 0);
    if (cents > Math.round((r.amountReceived ?? 0) * 100) - refunded)
      throw new Error('ERR0.10|Refund amount exceeds the original');
    r.refunds.push({
      amount: (cents / 100).toFixed(2),
      status: this.refundsComplete ? 'COMPLETE' : 'IN_PROGRESS',
      clientRefundID,
    });
    r.status = this.refundsComplete ? 'RETURN_COMPLETE' : 'RETURN_IN_PROGRESS';
    r.returnInitiator = 'MANUAL';
    return this.record(r);
  }
}

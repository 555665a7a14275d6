// A fake POLi (API v2) on 127.0.0.1, as its manual describes it (docs/providers/protocols/poli.md):
// HTTP Basic with the merchant code and authentication code on every call (anything else is
// refused and recorded), Initiate answering a NavigateURL with a token that holds a '/', its own
// bank page at that URL, GetTransaction by token, and the nudge: a form POST of the token alone.
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { deliver, FakeServer, type RawRequest } from './fake-server.js';

export interface PoliTransaction {
  token: string;
  TransactionRefNo: string;
  MerchantReference: string;
  PaymentAmount: number;
  AmountPaid: number;
  CurrencyCode: string;
  TransactionStatusCode: string;
  NotificationURL: string;
  SuccessURL: string;
  FailureURL: string;
  CancellationURL: string;
  Timeout: number;
  /** When the customer finished at their bank. */
  endedAt?: number;
}

/** New Zealand's wall clock, as POLi writes its times (no offset). */
const nzTime = (ms: number) =>
  new Intl.DateTimeFormat('sv-SE', {
    timeZone: 'Pacific/Auckland',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    fractionalSecondDigits: 3,
    hourCycle: 'h23',
  })
    .format(ms)
    .replace(' ', 'T')
    .replace(',', '.');

export class FakePoli extends FakeServer {
  readonly merchant_code = 'S6100001';
  readonly authentication_code = `auth-${randomBytes(6).toString('hex')}`;
  /** The merchant account's currency: POLi refuses any other. */
  currency = 'NZD';
  /** By token. */
  readonly transactions = new Map<string, PoliTransaction>();
  /** Calls refused for their credentials or their form, with why. */
  readonly refused: string[] = [];
  private refs = 596464600000;

  static async start(): Promise<FakePoli> {
    const fake = new FakePoli();
    await fake.listen();
    return fake;
  }

  /** The transaction of an out_trade_no (the latest, when it was initiated more than once). */
  byReference(out_trade_no: string): PoliTransaction | undefined {
    return [...this.transactions.values()].filter((t) => t.MerchantReference === out_trade_no).at(-1);
  }

  /** The customer finishes (or abandons) the transaction at their bank; POLi nudges unless told not to. */
  async finish(
    out_trade_no: string,
    status: 'Completed' | 'Failed' | 'Cancelled' | 'TimedOut' | 'ReceiptUnverified',
    opts: { nudge?: boolean } = {},
  ): Promise<{ status: number; body: string } | undefined> {
    const t = this.byReference(out_trade_no);
    if (!t) throw new Error(`no POLi transaction for ${out_trade_no}`);
    t.TransactionStatusCode = status;
    t.AmountPaid = status === 'Completed' ? t.PaymentAmount : 0;
    t.endedAt = Date.now();
    return opts.nudge === false ? undefined : this.nudge(t.token);
  }

  /** POSTs a nudge for `token` (any token: a forged one too) to the NotificationURL given, or to `url`. */
  nudge(token: string, url?: string): Promise<{ status: number; body: string }> {
    const target = url ?? this.transactions.get(token)?.NotificationURL;
    if (!target) throw new Error('no NotificationURL to nudge');
    return deliver(target, new URLSearchParams({ Token: token }).toString(), {
      'content-type': 'application/x-www-form-urlencoded',
    });
  }

  protected async handle(req: RawRequest, res: ServerResponse): Promise<void> {
    const json = (status: number, body: unknown) =>
      void res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
    // The customer's bank page: a link back to the shop, as POLi's return appends the token.
    if (req.url.pathname === '/pay') {
      const t = this.transactions.get(req.url.searchParams.get('token') ?? '');
      if (!t) return void res.writeHead(404).end('no such transaction');
      const back = new URL(t.SuccessURL);
      back.searchParams.set('token', t.token);
      return void res
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end(
          `<!doctype html><title>POLi</title><link rel="icon" href="data:,"><h1 id="poli">POLi: pay ${t.PaymentAmount} ${t.CurrencyCode}</h1><a id="back" href="${back.href}">Back to the shop</a>`,
        );
    }
    const expected = `Basic ${Buffer.from(`${this.merchant_code}:${this.authentication_code}`).toString('base64')}`;
    if (req.headers.authorization !== expected) {
      this.refused.push(`${req.url.pathname}: wrong credentials`);
      return json(401, { Message: 'Authorization has been denied for this request.' });
    }
    if (req.method === 'POST' && req.url.pathname === '/api/v2/Transaction/Initiate') {
      this.calls.push('Initiate');
      const fault = this.takeFault('Initiate');
      if (typeof fault === 'object')
        return json(200, { Success: false, ErrorCode: fault.business, ErrorMessage: fault.message ?? '' });
      let made: PoliTransaction | undefined;
      const work = () => (made = this.initiate(JSON.parse(req.body) as Record<string, unknown>));
      if (await this.applyFault(fault, res, work)) return;
      try {
        work();
      } catch (e) {
        this.refused.push(`Initiate: ${(e as Error).message}`);
        const [code, message] = (e as Error).message.split(': ');
        return json(200, { Success: false, ErrorCode: Number(code), ErrorMessage: message ?? '' });
      }
      this.opened(made!.MerchantReference);
      return json(200, {
        Success: true,
        TransactionRefNo: made!.TransactionRefNo,
        NavigateURL: `${this.url}/pay?token=${encodeURIComponent(made!.token)}`,
        ErrorCode: 0,
        ErrorMessage: '',
      });
    }
    if (req.method === 'GET' && req.url.pathname === '/api/v2/Transaction/GetTransaction') {
      this.calls.push('GetTransaction');
      const fault = this.takeFault('GetTransaction');
      if (await this.applyFault(fault, res, () => {})) return;
      // The query string is decoded once: a token encoded twice is not found (POLi's error 1001).
      const t = this.transactions.get(req.url.searchParams.get('token') ?? '');
      if (!t) return json(200, { ErrorCode: 1001, ErrorMessage: 'Invalid token' });
      this.asked(t.MerchantReference);
      const { token: _token, NotificationURL: _n, SuccessURL: _s, FailureURL: _f, CancellationURL: _c, ...shown } = t;
      return json(200, { ...shown, ErrorCode: null, ErrorMessage: '', EstablishedDateTime: new Date().toISOString() });
    }
    if (req.method === 'GET' && req.url.pathname === '/api/v2/Transaction/GetDailyTransactions') {
      this.calls.push('GetDailyTransactions');
      const fault = this.takeFault('GetDailyTransactions');
      if (await this.applyFault(fault, res, () => {})) return;
      const date = req.url.searchParams.get('date') ?? '';
      if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) return json(400, { ErrorCode: 1003, ErrorMessage: 'Invalid date' });
      const statuses = (req.url.searchParams.get('statuscodes') ?? '').split(',').filter(Boolean);
      return json(200, this.daily(date, statuses));
    }
    return json(404, { Message: `no ${req.method} ${req.url.pathname}` });
  }

  /** What GetDailyTransactions gets wrong on purpose: transactions left out, other amounts paid, others added. */
  dailyEdits: { omit?: Set<string>; amounts?: Map<string, number>; extra?: PoliTransaction[] } = {};

  /** The transactions that ended on a New Zealand day, of the statuses asked for (all when none). */
  private daily(date: string, statuses: string[]): Record<string, unknown>[] {
    return [...this.transactions.values(), ...(this.dailyEdits.extra ?? [])]
      .filter((t) => t.endedAt !== undefined && nzTime(t.endedAt).startsWith(date))
      .filter((t) => statuses.length === 0 || statuses.includes(t.TransactionStatusCode))
      .filter((t) => !this.dailyEdits.omit?.has(t.MerchantReference))
      .map((t) => {
        const {
          token: _t,
          NotificationURL: _n,
          SuccessURL: _s,
          FailureURL: _f,
          CancellationURL: _c,
          endedAt,
          ...shown
        } = t;
        const paid = this.dailyEdits.amounts?.get(t.MerchantReference);
        return {
          ...shown,
          ...(paid !== undefined && { AmountPaid: paid }),
          MerchantCode: this.merchant_code,
          EndDateTime: nzTime(endedAt!),
          BankReceipt: `${t.TransactionRefNo.slice(-6)}-RCPT`,
        };
      });
  }

  /** Initiate's checks, as POLi's error table names them; the transaction made. */
  private initiate(b: Record<string, unknown>): PoliTransaction {
    const text = (k: string) => (typeof b[k] === 'string' ? b[k] : '');
    for (const k of ['MerchantReference', 'MerchantHomepageURL', 'SuccessURL', 'NotificationURL'])
      if (!text(k)) throw new Error(`1022: Mandatory field ${k} is missing`);
    if (typeof b.Amount !== 'number' || Math.round(b.Amount * 100) !== b.Amount * 100)
      throw new Error('1024: Invalid currency format');
    if (b.Amount < 1) throw new Error('1025: Transaction cannot be initiated under than $1.00');
    if (b.CurrencyCode !== this.currency) throw new Error(`1024: CurrencyCode must be ${this.currency}`);
    if (!/^[0-9A-Za-z @\-_=:?./]{1,100}$/.test(text('MerchantReference')))
      throw new Error('1022: MerchantReference holds characters POLi does not take');
    // A token with a '/' in it, as POLi's are.
    const token = `${randomBytes(9).toString('base64url')}/${randomBytes(9).toString('base64url')}`;
    const t: PoliTransaction = {
      token,
      TransactionRefNo: String(this.refs++),
      MerchantReference: text('MerchantReference'),
      PaymentAmount: b.Amount,
      AmountPaid: 0,
      CurrencyCode: this.currency,
      TransactionStatusCode: 'Initiated',
      NotificationURL: text('NotificationURL'),
      SuccessURL: text('SuccessURL'),
      FailureURL: text('FailureURL'),
      CancellationURL: text('CancellationURL'),
      Timeout: typeof b.Timeout === 'number' ? b.Timeout : 900,
    };
    this.transactions.set(token, t);
    return t;
  }
}

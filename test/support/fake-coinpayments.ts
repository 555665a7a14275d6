// A fake CoinPayments (API v1 invoices) on 127.0.0.1, as its documentation describes it
// (docs/providers/protocols/coinpayments.md): every call's X-CoinPayments signature checked over
// the URL as sent (anything else refused and recorded), fiat currencies by their ids, invoices with
// their hosted checkout, GET of an invoice, and webhooks signed the same way over the notification
// address the invoice was given.
import { randomBytes, randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { signatureMatches, signatureOf, timestampOf } from '../../src/connectors/coinpayments/sign.js';
import { deliver, FakeServer, type RawRequest } from './fake-server.js';

export type InvoiceStatus = 'unpaid' | 'pending' | 'paid' | 'completed' | 'cancelled' | 'timedOut';

export interface CoinInvoice {
  id: string;
  invoiceId: string;
  status: InvoiceStatus;
  currencyId: string;
  value: string;
  description: string;
  notificationsUrl: string;
  notifications: string[];
  created: number;
  /** When it was paid (confirmed on the chain). */
  confirmed?: number;
}

/** The fiat currencies the fake knows, with the ids it gives them (CoinPayments numbers its own). */
const FIAT: Record<string, { id: string; decimalPlaces: number }> = {
  USD: { id: '5057', decimalPlaces: 2 },
  NZD: { id: '5058', decimalPlaces: 2 },
  AUD: { id: '5059', decimalPlaces: 2 },
  CNY: { id: '5060', decimalPlaces: 2 },
};

export class FakeCoinPayments extends FakeServer {
  readonly client_id = randomBytes(16).toString('hex');
  readonly client_secret = randomBytes(32).toString('base64');
  /** By CoinPayments' id. */
  readonly invoices = new Map<string, CoinInvoice>();
  /** Calls refused for their signature or their form, with why. */
  readonly refused: string[] = [];

  static async start(): Promise<FakeCoinPayments> {
    const fake = new FakeCoinPayments();
    await fake.listen();
    return fake;
  }

  /** The invoice of an out_trade_no (the latest, when there are several). */
  byReference(out_trade_no: string): CoinInvoice | undefined {
    return [...this.invoices.values()].filter((i) => i.invoiceId === out_trade_no).at(-1);
  }

  /** The invoice changes status (the customer paid, it timed out); the webhook goes unless told not to. */
  async settle(
    out_trade_no: string,
    status: InvoiceStatus,
    opts: { notify?: boolean } = {},
  ): Promise<{ status: number; body: string } | undefined> {
    const i = this.byReference(out_trade_no);
    if (!i) throw new Error(`no CoinPayments invoice for ${out_trade_no}`);
    i.status = status;
    if ((status === 'paid' || status === 'completed') && i.confirmed === undefined) i.confirmed = Date.now();
    return opts.notify === false ? undefined : this.webhook(i);
  }

  /** The webhook body CoinPayments sends for an invoice (its documented example's shape). */
  webhookBody(i: CoinInvoice, state: string = i.status): string {
    return JSON.stringify({
      id: randomUUID().replaceAll('-', ''),
      type: `Invoice${state[0].toUpperCase()}${state.slice(1)}`,
      timestamp: new Date().toISOString(),
      invoice: {
        invoiceId: i.invoiceId,
        id: i.id,
        state: `${state[0].toUpperCase()}${state.slice(1)}`,
        amount: { currency: { id: i.currencyId }, total: i.value, subtotal: i.value },
      },
    });
  }

  /** POSTs a webhook, signed with `secret` (the account's unless a test forges one) over `url`. */
  webhook(
    i: CoinInvoice,
    opts: { body?: string; secret?: string; url?: string; signedUrl?: string } = {},
  ): Promise<{ status: number; body: string }> {
    const url = opts.url ?? i.notificationsUrl;
    const body = opts.body ?? this.webhookBody(i);
    const timestamp = timestampOf(Date.now());
    const signature = signatureOf(opts.secret ?? this.client_secret, {
      method: 'POST',
      url: opts.signedUrl ?? url,
      clientId: this.client_id,
      timestamp,
      body,
    });
    return deliver(url, body, {
      'content-type': 'application/json',
      'x-coinpayments-client': this.client_id,
      'x-coinpayments-timestamp': timestamp,
      'x-coinpayments-signature': signature,
    });
  }

  protected async handle(req: RawRequest, res: ServerResponse): Promise<void> {
    const json = (status: number, body: unknown) =>
      void res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
    const path = req.url.pathname;
    // The hosted checkout: a link back to the shop.
    if (path === '/checkout/') {
      const i = this.invoices.get(req.url.searchParams.get('invoice-id') ?? '');
      const back = req.url.searchParams.get('success-url');
      if (!i || !back) return void res.writeHead(404).end('no such invoice');
      return void res
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end(
          `<!doctype html><title>CoinPayments</title><link rel="icon" href="data:,"><h1 id="coinpayments">Invoice ${i.id}</h1><a id="back" href="${back}">Back to the shop</a>`,
        );
    }
    const why = this.unsigned(req);
    if (why) {
      this.refused.push(`${req.method} ${path}: ${why}`);
      return json(401, { title: 'Unauthorized', status: 401 });
    }
    if (req.method === 'GET' && path === '/api/v1/currencies') {
      this.calls.push('currencies');
      const q = (req.url.searchParams.get('q') ?? '').toUpperCase();
      const found = Object.entries(FIAT)
        .filter(([symbol]) => symbol.includes(q))
        .map(([symbol, c]) => ({ id: c.id, type: 'fiat', symbol, name: symbol, decimalPlaces: c.decimalPlaces }));
      return json(200, found);
    }
    if (req.method === 'POST' && path === '/api/v1/merchant/invoices') {
      this.calls.push('createInvoice');
      const fault = this.takeFault('createInvoice');
      if (typeof fault === 'object') return json(400, { title: fault.business, detail: fault.message ?? '' });
      let made: CoinInvoice | undefined;
      const work = () => (made = this.create(JSON.parse(req.body) as Record<string, unknown>));
      if (await this.applyFault(fault, res, work)) return;
      try {
        work();
      } catch (e) {
        this.refused.push(`createInvoice: ${(e as Error).message}`);
        return json(400, { title: 'Bad Request', detail: (e as Error).message });
      }
      this.opened(made!.invoiceId);
      return json(200, {
        invoices: [
          {
            id: made!.id,
            link: `${this.url}/invoice/${made!.id}`,
            checkoutLink: `${this.url}/checkout/?invoice-id=${made!.id}`,
            payment: { paymentId: randomUUID(), expires: new Date(Date.now() + 3_600_000).toISOString() },
          },
        ],
      });
    }
    if (req.method === 'GET' && path === '/api/v1/merchant/invoices') {
      this.calls.push('listInvoices');
      return json(200, this.list(req.url.searchParams));
    }
    const one = /^\/api\/v1\/merchant\/invoices\/([^/]+)$/.exec(path);
    if (req.method === 'GET' && one) {
      this.calls.push('getInvoice');
      const fault = this.takeFault('getInvoice');
      if (await this.applyFault(fault, res, () => {})) return;
      const i = this.invoices.get(decodeURIComponent(one[1]));
      if (!i) return json(404, { title: 'Not Found', status: 404 });
      this.asked(i.invoiceId);
      return json(200, {
        id: i.id,
        invoiceId: i.invoiceId,
        status: i.status,
        description: i.description,
        amount: {
          breakdown: { subtotal: { currencyId: i.currencyId, value: i.value } },
          currencyId: i.currencyId,
          value: i.value,
        },
      });
    }
    return json(404, { title: `no ${req.method} ${path}` });
  }

  /** The most invoices a page of the list holds. */
  pageSize = 100;
  /** What the invoice list gets wrong on purpose: invoices left out, other amounts (`value`), others added. */
  listEdits: { omit?: Set<string>; values?: Map<string, string>; extra?: CoinInvoice[] } = {};

  /** An invoice as the list summarises it. */
  private summary(i: CoinInvoice): Record<string, unknown> {
    const value = this.listEdits.values?.get(i.invoiceId) ?? i.value;
    return {
      id: i.id,
      invoiceId: i.invoiceId,
      status: i.status,
      created: new Date(i.created).toISOString(),
      ...(i.confirmed !== undefined && { confirmed: new Date(i.confirmed).toISOString() }),
      description: i.description,
      amount: { currencyId: i.currencyId, value, displayValue: (Number(value) / 100).toFixed(2) },
    };
  }

  /** GET /api/v1/merchant/invoices: created from `from` to `to`, newest first, `limit` a page from the `after` cursor. */
  private list(q: URLSearchParams): Record<string, unknown> {
    const from = q.has('from') ? Date.parse(q.get('from')!) : -Infinity;
    const to = q.has('to') ? Date.parse(q.get('to')!) : Infinity;
    const limit = Math.min(Number(q.get('limit') ?? 100), this.pageSize);
    const start = Number(q.get('after') ?? 0);
    const all = [...this.invoices.values(), ...(this.listEdits.extra ?? [])]
      .filter((i) => i.created >= from && i.created <= to && !this.listEdits.omit?.has(i.invoiceId))
      .sort((a, b) => b.created - a.created);
    const items = all.slice(start, start + limit).map((i) => this.summary(i));
    const more = start + limit < all.length;
    return {
      items,
      paging: {
        cursors: { before: String(start), ...(more && { after: String(start + limit) }) },
        limit,
        next: more ? `${this.url}/api/v1/merchant/invoices?after=${start + limit}` : null,
      },
    };
  }

  /** Why a call's signature is not this integration's, or undefined when it is. */
  private unsigned(req: RawRequest): string | undefined {
    const h = (n: string) => {
      const v = req.headers[n];
      return typeof v === 'string' ? v : '';
    };
    if (h('x-coinpayments-client') !== this.client_id) return 'wrong client id';
    const timestamp = h('x-coinpayments-timestamp');
    if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/.test(timestamp)) return `timestamp ${timestamp} is not YYYY-MM-DDTHH:mm:ss`;
    if (Math.abs(Date.parse(`${timestamp}Z`) - Date.now()) > 5 * 60_000) return 'timestamp more than 5 minutes off';
    const parts = {
      method: req.method,
      url: `${this.url}${req.url.pathname}${req.url.search}`,
      clientId: this.client_id,
      timestamp,
      body: req.method === 'GET' ? '' : req.body,
    };
    return signatureMatches(h('x-coinpayments-signature'), this.client_secret, parts) ? undefined : 'bad signature';
  }

  /** The invoice's checks, as the API's schema has them; the invoice made. */
  private create(b: Record<string, unknown>): CoinInvoice {
    const amount = b.amount as
      { currencyId?: unknown; value?: unknown; breakdown?: { subtotal?: { value?: unknown } } } | undefined;
    const items = b.items as unknown[] | undefined;
    const webhooks = b.webhooks as { notificationsUrl?: unknown; notifications?: unknown }[] | undefined;
    if (typeof b.invoiceId !== 'string' || !b.invoiceId || b.invoiceId.length > 127)
      throw new Error('invoiceId is missing or too long');
    if (!Array.isArray(items) || items.length === 0) throw new Error('items are required');
    if (!amount || typeof amount.value !== 'string' || !/^\d+$/.test(amount.value))
      throw new Error('amount.value must be a string of digits');
    if (amount.breakdown?.subtotal?.value !== amount.value)
      throw new Error('amount.breakdown.subtotal must be the amount');
    if (!Object.values(FIAT).some((c) => c.id === amount.currencyId))
      throw new Error(`unknown currencyId ${String(amount.currencyId)}`);
    if ('payment' in b) throw new Error('payment given: that is the white-label flow, not the hosted checkout');
    const hook = webhooks?.[0];
    if (
      typeof hook?.notificationsUrl !== 'string' ||
      !Array.isArray(hook.notifications) ||
      hook.notifications.length === 0
    )
      throw new Error('webhooks need a notificationsUrl and a list of notifications');
    const i: CoinInvoice = {
      id: randomUUID(),
      invoiceId: b.invoiceId,
      status: 'unpaid',
      currencyId: String(amount.currencyId),
      value: amount.value,
      description: typeof b.description === 'string' ? b.description : '',
      notificationsUrl: hook.notificationsUrl,
      notifications: hook.notifications.map(String),
      created: Date.now(),
    };
    this.invoices.set(i.id, i);
    return i;
  }
}

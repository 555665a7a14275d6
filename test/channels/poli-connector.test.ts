// The POLi connector against a fake POLi that checks every call's credentials and form: Initiate,
// GetTransaction by the token its answer held, the nudge read by asking POLi, the probe, and
// what POLi cannot do (close, refund) refused, never an empty result.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderHttp } from '../../src/connectors/http.js';
import { PoliConnector } from '../../src/connectors/poli/connector.js';
import { poliDescriptor } from '../../src/connectors/poli/descriptor.js';
import type { ChannelAccount, OpenPaymentInput } from '../../src/ports/connector.js';
import { FakePoli } from '../support/fake-poli.js';

describe('the POLi connector', () => {
  let fake: FakePoli;
  let http: ProviderHttp;
  let poli: PoliConnector;
  let account: ChannelAccount;
  let seq = 0;
  beforeAll(async () => {
    fake = await FakePoli.start();
    http = new ProviderHttp(1500);
    poli = new PoliConnector(http);
    account = {
      wallet_id: 'W1',
      payment_method: 'polipay',
      provider: 'poli',
      config: { merchant_code: fake.merchant_code, currency_mode: 'cross-border', currency: 'NZD', endpoint: fake.url },
      secrets: { authentication_code: fake.authentication_code },
    };
  });
  afterAll(async () => {
    await http?.close();
    await fake?.close();
  });

  const input = (over: Partial<OpenPaymentInput> = {}): OpenPaymentInput => ({
    out_trade_no: `20261129${String(++seq).padStart(8, '0')}R`,
    flow: 'redirect',
    charge: { amount: 12030, currency: 'NZD' },
    description: 'Pinot Noir',
    expires_at: Date.now() + 86_400_000,
    notify_url: 'http://127.0.0.1:9/channels/poli/notify',
    return_url: 'http://127.0.0.1:9/v2/checkout/nonce1',
    client_ip: '122.122.122.1',
    ...over,
  });

  it('opens: the customer goes to the NavigateURL; POLi was sent what its manual asks', async () => {
    const i = input();
    const opened = await poli.open(account, i);
    expect(opened).toMatchObject({
      kind: 'opened',
      payload: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/pay\?token=/),
    });
    expect(fake.refused).toEqual([]);
    expect(fake.byReference(i.out_trade_no)).toMatchObject({
      PaymentAmount: 120.3,
      CurrencyCode: 'NZD',
      SuccessURL: i.return_url,
      NotificationURL: i.notify_url,
      Timeout: 900,
    });
  });

  it('refuses what POLi cannot take: under 1.00 (without asking), another currency, another flow', async () => {
    const calls = fake.calls.length;
    expect(await poli.open(account, input({ charge: { amount: 99, currency: 'NZD' } }))).toEqual({
      kind: 'refused',
      reason: 'POLi takes 1.00 or more',
    });
    expect(await poli.open(account, input({ flow: 'qr' }))).toMatchObject({ kind: 'refused' });
    expect(fake.calls.length).toBe(calls);
    fake.currency = 'AUD';
    try {
      expect(await poli.open(account, input())).toMatchObject({
        kind: 'refused',
        reason: expect.stringContaining('1024'),
      });
    } finally {
      fake.currency = 'NZD';
    }
  });

  it('queries by the token of its answer: pending, then paid with what was paid and the POLi ID', async () => {
    const i = input();
    const opened = await poli.open(account, i);
    const payload = opened.kind === 'opened' ? opened.payload : null;
    expect(await poli.query(account, i.out_trade_no, { payload })).toEqual({ kind: 'pending' });
    await fake.finish(i.out_trade_no, 'Completed', { nudge: false });
    expect(await poli.query(account, i.out_trade_no, { payload })).toEqual({
      kind: 'paid',
      provider_ref: fake.byReference(i.out_trade_no)!.TransactionRefNo,
      charge: { amount: 12030, currency: 'NZD' },
    });
    // Another payment's token is not this one's answer; without a stored answer there is nothing to ask by.
    expect(await poli.query(account, 'someone-else', { payload })).toMatchObject({ kind: 'unknown' });
    // No answer to the open: nobody was given its NavigateURL, so nothing can be paid there.
    expect(await poli.query(account, i.out_trade_no, { payload: null })).toEqual({ kind: 'not_found' });
  });

  it('a timeout, a 500 or a reset is no answer, never a refusal', async () => {
    const i = input();
    fake.fail('Initiate', 'timeout');
    expect(await poli.open(account, i)).toMatchObject({ kind: 'unknown' });
    fake.fail('Initiate', 'http-500');
    expect(await poli.open(account, i)).toMatchObject({ kind: 'unknown' });
    const opened = await poli.open(account, i);
    const payload = opened.kind === 'opened' ? opened.payload : null;
    fake.fail('GetTransaction', 'reset-after');
    expect(await poli.query(account, i.out_trade_no, { payload })).toMatchObject({ kind: 'unknown' });
    fake.fail('Initiate', { business: '3007', message: 'Invalid transaction status' });
    expect(await poli.open(account, input())).toMatchObject({ kind: 'unknown' });
  });

  it('reads a nudge by asking POLi with the account that knows the token; a forged token is refused', async () => {
    const i = input();
    const opened = await poli.open(account, i);
    expect(opened.kind).toBe('opened');
    const t = fake.byReference(i.out_trade_no)!;
    t.TransactionStatusCode = 'Completed';
    t.AmountPaid = t.PaymentAmount;
    const stranger: ChannelAccount = { ...account, secrets: { authentication_code: 'not-ours' } };
    const read = await poli.readNotification(
      { headers: {}, body: new URLSearchParams({ Token: t.token }).toString() },
      [stranger, account],
    );
    expect(read).toMatchObject({
      kind: 'event',
      event: { account, out_trade_no: i.out_trade_no, state: { kind: 'paid', charge: { amount: 12030 } } },
    });
    expect(await poli.readNotification({ headers: {}, body: 'Token=forged%2Ftoken' }, [account])).toMatchObject({
      kind: 'refused',
      reason: 'no POLi account knows the token',
    });
    expect(await poli.readNotification({ headers: {}, body: 'nothing=here' }, [account])).toMatchObject({
      kind: 'refused',
    });
    expect(poli.notificationReply(true)).toMatchObject({ status: 200 });
    expect(poli.notificationReply(false)).toMatchObject({ status: 500 });
  });

  it('probes the credentials; cannot close or refund, and says so', async () => {
    expect(await poli.probe(account)).toMatchObject({ ok: true });
    expect(await poli.probe({ ...account, secrets: { authentication_code: 'wrong' } })).toMatchObject({
      ok: false,
      reason: expect.stringContaining('401'),
    });
    expect(await poli.close()).toMatchObject({ kind: 'refused' });
    expect(await poli.refund()).toMatchObject({ kind: 'refused', reason: expect.stringContaining('no refund') });
    expect(poli.capabilities).toMatchObject({ refund: false, close: false, query: true, merchantHostedQr: false });
  });

  it("its account: POLi's currencies only", () => {
    expect(poliDescriptor.checkAccount(account, Date.now())).toEqual([]);
    expect(
      poliDescriptor.checkAccount({ ...account, config: { ...account.config, currency: 'USD' } }, Date.now()),
    ).toEqual([expect.stringContaining('POLi charges NZD')]);
    // POLi closed in Australia in 2023: an AUD wallet cannot have it either.
    expect(
      poliDescriptor.checkAccount({ ...account, config: { ...account.config, currency: 'AUD' } }, Date.now()),
    ).toEqual([expect.stringContaining('closed in Australia')]);
  });
});

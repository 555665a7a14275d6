// GET /v2/transaction/{merchant_reference}: the response, both signature forms, errors, long poll.
// (Over 300 lines: one endpoint's behaviour; each case is short.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hmacSha256Hex, signRequest, verifyQueryResponse } from '../../sdk/signing.js';
import type { MerchantCredentials } from '../../src/cli/admin.js';
import { formatPayTime } from '../../src/domain/time.js';
import { addWallet, rawGet, waitUntil } from '../support/api.js';
import { ENGINES, startTestGateway, uniqueRef, type TestGateway } from '../support/gateway.js';

type Params = Record<string, string | undefined>;

describe.each(ENGINES)('query on %s', (engine) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(engine);
  });
  afterAll(async () => gw?.close());

  /** GET with exactly these query parameters (undefined ones left out). */
  async function get(
    ref: string,
    params: Params,
  ): Promise<{ status: number; text: string; json: any; contentType: string }> {
    const qs = new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined));
    const res = await rawGet(gw, `/v2/transaction/${encodeURIComponent(ref)}?${qs}`);
    return { ...res, json: JSON.parse(res.text) };
  }
  const sorted = (ref: string, m: MerchantCredentials = gw.merchant, extra: Params = {}) =>
    signRequest({ merchant_reference: ref, user_id: m.user_id, ...extra }, m.api_key);

  describe('the response', () => {
    it('is sent with exactly these headers, also to a HEAD (no body) and a long poll', async () => {
      const { merchant_reference } = await gw.create();
      const qs = `user_id=${gw.merchant.user_id}&signature=${sorted(merchant_reference)}`;
      const url = `${gw.url}/v2/transaction/${merchant_reference}?${qs}`;
      const res = await fetch(url);
      const body = await res.text();
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(body)));
      expect(JSON.parse(body)).toMatchObject({ code: 0, merchant_reference });
      const head = await fetch(url, { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(head.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(body)));
      expect(await head.text()).toBe('');
      const polled = gw.query(merchant_reference, { block: true });
      await waitUntil(() => gw.ctx.signals.waiting > 0, 'the poll waits');
      const { order_id } = (await gw.store.transactions.findResult(gw.merchant.user_id, merchant_reference))!;
      await gw.pay(order_id);
      expect(await polled).toMatchObject({ code: 0, status: 'paid' });
    });

    it('pending: every field, amount a JSON number, signed', async () => {
      const { merchant_reference, order_id } = await gw.create({ amount: '120.00' });
      const res = await get(merchant_reference, {
        user_id: gw.merchant.user_id,
        signature: sorted(merchant_reference),
      });
      expect(res.status).toBe(200);
      expect(res.contentType).toMatch(/^application\/json/);
      const order = await gw.store.transactions.find(order_id);
      expect(res.json).toEqual({
        code: 0,
        message: 'SUCCESS',
        merchant_reference,
        status: 'pending',
        currency: 'NZD',
        amount: 120,
        amount_cny: 557.32,
        rate: 4.6443,
        signature: expect.stringMatching(/^[0-9a-f]{64}$/),
        payment_method: 'alipay',
        order_id,
        pay_time: formatPayTime(order!.created_at),
      });
      expect(res.text).toContain('"amount":120,');
      expect(res.text).toContain('"rate":4.64430,');
      expect(verifyQueryResponse(res.json, gw.merchant.api_key)).toBe(true);
      expect(res.json.signature).toBe(hmacSha256Hex(gw.merchant.api_key, `${merchant_reference}alipaypendingNZD120`));
    });

    it.each([
      ['paid', 'alipay'],
      ['failed', 'wechat'],
      ['rejected', 'payid'],
    ] as const)('%s (%s): status, pay_time of the outcome, signature', async (result, payment_method) => {
      const { merchant_reference, order_id } = await gw.create({ payment_method, amount: '120.50' });
      expect((await gw.pay(order_id, result)).status).toBe(result);
      const res = await get(merchant_reference, {
        user_id: gw.merchant.user_id,
        signature: sorted(merchant_reference),
      });
      expect(res.json).toMatchObject({ code: 0, status: result, payment_method, amount: 120.5 });
      expect(res.text).toContain('"amount":120.5,');
      expect(res.json.pay_time).toBe(formatPayTime((await gw.store.transactions.find(order_id))!.pay_time!));
      expect(verifyQueryResponse(res.json, gw.merchant.api_key)).toBe(true);
    });
  });

  it('queries arriving together (read in one statement) each answer their own order, or 201', async () => {
    const other = await gw.newMerchant();
    const mine = await Promise.all(Array.from({ length: 12 }, () => gw.create()));
    const theirs = await Promise.all(Array.from({ length: 4 }, () => gw.create({}, other)));
    await gw.pay(mine[3].order_id, 'paid');
    const asks = [
      ...mine.map((o) => ({ m: gw.merchant, ref: o.merchant_reference, want: o.order_id })),
      ...theirs.map((o) => ({ m: other, ref: o.merchant_reference, want: o.order_id })),
      { m: gw.merchant, ref: theirs[0].merchant_reference, want: undefined },
      { m: gw.merchant, ref: uniqueRef('none'), want: undefined },
    ];
    const got = await Promise.all(asks.map((a) => get(a.ref, { user_id: a.m.user_id, signature: sorted(a.ref, a.m) })));
    got.forEach((res, i) => {
      const a = asks[i];
      if (a.want === undefined) expect(res.json.code).toBe(201);
      else {
        expect(res.json).toMatchObject({ code: 0, merchant_reference: a.ref, order_id: a.want });
        expect(verifyQueryResponse(res.json, a.m.api_key)).toBe(true);
      }
    });
    expect(got[3].json.status).toBe('paid');
    expect(got.filter((r) => r.json.status === 'pending')).toHaveLength(15);
  });

  describe('signature forms', () => {
    let ref: string;
    beforeAll(async () => {
      // Paid, so that is_block=1 answers at once.
      const { merchant_reference, order_id } = await gw.create();
      await gw.pay(order_id);
      ref = merchant_reference;
    });
    const user_id = () => gw.merchant.user_id;

    it('sorted, with the key appended', async () => {
      expect((await get(ref, { user_id: user_id(), signature: sorted(ref) })).json.code).toBe(0);
    });

    it('merchant_reference + user_id concatenated, keyed, no key appended', async () => {
      const signature = hmacSha256Hex(gw.merchant.api_key, ref + user_id());
      expect((await get(ref, { user_id: user_id(), signature })).json.code).toBe(0);
    });

    it('with is_block sent: signed with or without is_block', async () => {
      const withIt = sorted(ref, gw.merchant, { is_block: '1' });
      expect((await get(ref, { user_id: user_id(), is_block: '1', signature: withIt })).json.code).toBe(0);
      expect((await get(ref, { user_id: user_id(), is_block: '1', signature: sorted(ref) })).json.code).toBe(0);
      expect(
        (await get(ref, { user_id: user_id(), is_block: '0', signature: sorted(ref, gw.merchant, { is_block: '0' }) }))
          .json.code,
      ).toBe(0);
      // is_block signed but not sent does not verify.
      expect((await get(ref, { user_id: user_id(), signature: withIt })).json.code).toBe(206);
    });

    it('with an empty is_block sent (is_block=): signed without it or with `is_block=` kept', async () => {
      const kept = hmacSha256Hex(
        gw.merchant.api_key,
        `is_block=&merchant_reference=${ref}&user_id=${user_id()}${gw.merchant.api_key}`,
      );
      for (const signature of [sorted(ref), kept]) {
        const res = await get(ref, { user_id: user_id(), is_block: '', signature });
        expect(res.status).toBe(200);
        expect(res.json).toMatchObject({ code: 0, merchant_reference: ref, status: 'paid' });
      }
    });

    it('uppercase hex', async () => {
      expect((await get(ref, { user_id: user_id(), signature: sorted(ref).toUpperCase() })).json.code).toBe(0);
    });

    it.each([
      ['another reference', (r: string) => sorted(`${r}x`)],
      [
        'the concatenation with the key appended',
        (r: string) => hmacSha256Hex(gw.merchant.api_key, r + gw.merchant.user_id + gw.merchant.api_key),
      ],
      ['a truncated signature', (r: string) => sorted(r).slice(0, 63)],
      ['not hex', () => 'x'.repeat(64)],
    ])('%s answers 206', async (_what, sign) => {
      expect((await get(ref, { user_id: user_id(), signature: sign(ref) })).json).toMatchObject({
        code: 206,
        message: 'Signature from Merchant request is wrong',
      });
    });

    it("another merchant's key answers 206", async () => {
      const other = await gw.newMerchant();
      expect((await get(ref, { user_id: user_id(), signature: sorted(ref, other) })).json.code).toBe(206);
    });

    it("the key of the order's wallet, not another wallet of the user", async () => {
      const second = await addWallet(gw, 'NZD');
      const { merchant_reference } = await gw.create({}, second);
      expect(
        (await get(merchant_reference, { user_id: user_id(), signature: sorted(merchant_reference) })).json.code,
      ).toBe(206);
      expect(
        (await get(merchant_reference, { user_id: user_id(), signature: sorted(merchant_reference, second) })).json
          .code,
      ).toBe(0);
    });
  });

  describe('errors', () => {
    it('an unknown order answers 201, signed with any wallet key of the user', async () => {
      const ref = uniqueRef('none');
      expect((await get(ref, { user_id: gw.merchant.user_id, signature: sorted(ref) })).json).toMatchObject({
        code: 201,
        message: 'order not exist',
      });
      const second = await addWallet(gw, 'AUD');
      expect((await get(ref, { user_id: gw.merchant.user_id, signature: sorted(ref, second) })).json.code).toBe(201);
    });

    it('an unknown order with a bad signature answers 206, revealing nothing', async () => {
      const ref = uniqueRef('none');
      expect((await get(ref, { user_id: gw.merchant.user_id, signature: 'a'.repeat(64) })).json.code).toBe(206);
    });

    it("another user's order is unknown to this user: 201", async () => {
      const { merchant_reference } = await gw.create();
      const other = await gw.newMerchant();
      expect(
        (await get(merchant_reference, { user_id: other.user_id, signature: sorted(merchant_reference, other) })).json
          .code,
      ).toBe(201);
    });

    it('an unknown user answers 110; a disabled one 205', async () => {
      const { merchant_reference } = await gw.create();
      expect(
        (await get(merchant_reference, { user_id: 'U404', signature: sorted(merchant_reference) })).json,
      ).toMatchObject({ code: 110 });
      const m = await gw.newMerchant();
      const mine = await gw.create({}, m);
      await gw.store.accounts.setUserStatus(m.user_id, 'disabled');
      expect(
        (await get(mine.merchant_reference, { user_id: m.user_id, signature: sorted(mine.merchant_reference, m) }))
          .json,
      ).toMatchObject({ code: 205 });
    });

    it.each([
      ['user_id missing', { user_id: undefined }, 204],
      ['user_id empty', { user_id: '' }, 204],
      ['signature missing', { signature: undefined }, 204],
      ['signature empty', { signature: '' }, 204],
      ['user_id too long', { user_id: 'U'.repeat(33) }, 207],
      ['signature too long', { signature: 'a'.repeat(1025) }, 207],
      ['is_block not 0 or 1', { is_block: '2' }, 207],
      ['is_block true', { is_block: 'true' }, 207],
    ] as const)('%s answers %i', async (_what, change, code) => {
      const ref = uniqueRef('q');
      expect((await get(ref, { user_id: gw.merchant.user_id, signature: sorted(ref), ...change })).json).toMatchObject({
        code,
      });
    });

    it('an empty merchant_reference in the path answers 204 as HTTP 200 JSON', async () => {
      for (const path of [
        `/v2/transaction/?user_id=${gw.merchant.user_id}&signature=${sorted('')}`,
        `/v2/transaction?user_id=${gw.merchant.user_id}`,
      ]) {
        const res = await rawGet(gw, path);
        expect(res.status, path).toBe(200);
        expect(JSON.parse(res.text), path).toMatchObject({
          code: 204,
          message: 'Some fields from input are null',
          detail: expect.stringMatching(/merchant_reference/),
        });
      }
    });

    it('a repeated user_id answers 207', async () => {
      const ref = uniqueRef('q');
      const qs = `user_id=${gw.merchant.user_id}&user_id=${gw.merchant.user_id}&signature=${sorted(ref)}`;
      expect(JSON.parse((await rawGet(gw, `/v2/transaction/${ref}?${qs}`)).text)).toMatchObject({ code: 207 });
    });

    it.each([
      ['too long', 'm'.repeat(65)],
      ['longer than a path parameter may be', 'm'.repeat(101)],
      ['with a space', 'a b'],
      ['with a slash', 'a/b'],
      ['non-ASCII', 'réf'],
    ])('a merchant_reference %s answers 207', async (_what, ref) => {
      const res = await get(ref, { user_id: gw.merchant.user_id, signature: sorted(ref) });
      expect(res.status).toBe(200);
      expect(res.json).toMatchObject({ code: 207, message: 'Param is wrong' });
    });
  });
});

describe.each(ENGINES)('long poll on %s', (engine) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(engine, { longPollTimeoutMs: 10_000 });
  });
  afterAll(async () => gw?.close());

  it('is_block=1 answers as soon as another request pays the order', async () => {
    const { merchant_reference, order_id } = await gw.create();
    const events: string[] = [];
    const waitingBefore = gw.ctx.signals.waiting;
    const query = gw.query(merchant_reference, { block: true }).then((r) => {
      events.push('query answered');
      return r;
    });
    await waitUntil(() => gw.ctx.signals.waiting > waitingBefore, 'the query waits');
    await new Promise((r) => setTimeout(r, 300));
    expect(events).toEqual([]);
    events.push('paying');
    await gw.pay(order_id);
    // Half the long-poll timeout: if the query only answered at its timeout, this comes first.
    const halfTimeout = new Promise<void>((r) => setTimeout(r, 5_000).unref()).then(() =>
      events.push('half the timeout'),
    );
    const reply = await Promise.race([query, halfTimeout]);
    expect(events).toEqual(['paying', 'query answered']);
    expect(reply).toMatchObject({ code: 0, status: 'paid', order_id });
  });

  it('many long polls of one order all get the paid answer, signed alike', async () => {
    const { merchant_reference, order_id } = await gw.create();
    const waitingBefore = gw.ctx.signals.waiting;
    const polls = Array.from({ length: 50 }, () => gw.query(merchant_reference, { block: true }));
    await waitUntil(() => gw.ctx.signals.waiting === waitingBefore + 50, 'all 50 queries wait');
    expect((await gw.pay(order_id)).status).toBe('paid');
    const replies = await Promise.all(polls);
    for (const reply of replies) expect(reply).toMatchObject({ code: 0, status: 'paid', order_id, merchant_reference });
    expect(new Set(replies.map((r) => JSON.stringify(r))).size).toBe(1);
    expect(verifyQueryResponse(replies[0], gw.merchant.api_key)).toBe(true);
    expect(gw.ctx.signals.waiting).toBe(waitingBefore);
  });

  it('an empty is_block (is_block=) is not sent: a pending order is answered at once', async () => {
    const { merchant_reference } = await gw.create();
    const signature = signRequest({ merchant_reference, user_id: gw.merchant.user_id }, gw.merchant.api_key);
    const query = gw.get(
      `/v2/transaction/${merchant_reference}?${new URLSearchParams({ user_id: gw.merchant.user_id, is_block: '', signature })}`,
    );
    const events: string[] = [];
    const halfTimeout = new Promise<void>((r) => setTimeout(r, 5_000).unref()).then(() =>
      events.push('half the timeout'),
    );
    const reply = await Promise.race([query.then((r) => (events.push('query answered'), r)), halfTimeout]);
    expect(events).toEqual(['query answered']);
    expect(reply).toMatchObject({ code: 0, status: 'pending', merchant_reference });
  });

  it('is_block=1 on an order that is already final answers at once', async () => {
    const { merchant_reference, order_id } = await gw.create();
    await gw.pay(order_id, 'failed');
    const events: string[] = [];
    const query = gw.query(merchant_reference, { block: true }).then((r) => (events.push('query answered'), r));
    const halfTimeout = new Promise<void>((r) => setTimeout(r, 5_000).unref()).then(() =>
      events.push('half the timeout'),
    );
    const reply = await Promise.race([query, halfTimeout]);
    expect(events).toEqual(['query answered']);
    expect(reply).toMatchObject({ code: 0, status: 'failed' });
  });

  it('a client that goes away stops waiting', async () => {
    const { merchant_reference } = await gw.create();
    const waitingBefore = gw.ctx.signals.waiting;
    const abort = new AbortController();
    const signature = signRequest(
      { merchant_reference, user_id: gw.merchant.user_id, is_block: '1' },
      gw.merchant.api_key,
    );
    const qs = new URLSearchParams({ user_id: gw.merchant.user_id, is_block: '1', signature });
    const pending = fetch(`${gw.url}/v2/transaction/${merchant_reference}?${qs}`, { signal: abort.signal }).catch(
      () => 'aborted',
    );
    await waitUntil(() => gw.ctx.signals.waiting > waitingBefore, 'the query waits');
    abort.abort();
    expect(await pending).toBe('aborted');
    await waitUntil(() => gw.ctx.signals.waiting === waitingBefore, 'the waiter is released');
  });
});

describe.each(ENGINES)('long poll timeout on %s', (engine) => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway(engine, { longPollTimeoutMs: 300 });
  });
  afterAll(async () => gw?.close());

  it('answers pending after the timeout', async () => {
    const { merchant_reference } = await gw.create();
    expect(await gw.query(merchant_reference, { block: true })).toMatchObject({ code: 0, status: 'pending' });
    expect(gw.ctx.signals.waiting).toBe(0);
  });

  it('is_block=0 does not wait', async () => {
    const { merchant_reference } = await gw.create();
    const signature = signRequest(
      { merchant_reference, user_id: gw.merchant.user_id, is_block: '0' },
      gw.merchant.api_key,
    );
    const reply = await gw.get(
      `/v2/transaction/${merchant_reference}?${new URLSearchParams({ user_id: gw.merchant.user_id, is_block: '0', signature })}`,
    );
    expect(reply).toMatchObject({ code: 0, status: 'pending' });
  });
});

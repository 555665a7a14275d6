// Payouts (issue 40), on both engines, through the CLI an operator and a merchant's scripts use:
// a bank account added and verified, a payout requested from available money, approved, batched
// into the currency's bank file (ABA for AUD, checked against the format's rules; IB4B CSV for
// NZD), marked paid or returned; canceled before its file; never more than available, also with
// refunds at the same time; the ledger sound after each.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR_BANK, PAYOUTS_IN_TRANSIT } from '../../src/domain/ledger.js';
import type { MerchantCredentials } from '../../src/usecases/administration.js';
import { runSettlement } from '../../src/usecases/books.js';
import type { Payout } from '../../src/domain/payout.js';
import { runAutoPayouts } from '../../src/usecases/auto-payouts.js';
import { addBankAccount, requestPayout, verifyBankAccount } from '../../src/usecases/payouts.js';
import { abaProblems } from '../support/aba-check.js';
import { refundBody } from '../support/api.js';
import { gatewayCli } from '../support/cli.js';
import { databaseFor, ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';

const FILE_ENV = {
  PAYOUT_ABA_USER_ID: '301500',
  PAYOUT_ABA_BANK: 'WBC',
  PAYOUT_ABA_USER_NAME: 'Kiwi Payments Pty Ltd',
  PAYOUT_ABA_REMITTER: 'KIWI PAYMENTS',
  PAYOUT_ABA_TRACE_BSB: '032-000',
  PAYOUT_ABA_TRACE_ACCOUNT: '123456',
  PAYOUT_NZ_ACCOUNT: '38-9016-0704505-00',
  PAYOUT_NZ_NAME: 'Kiwi Payments',
};

describe.each(ENGINES)('payouts on %s', (engine) => {
  let gw: TestGateway;
  let database: string;
  const dir = mkdtempSync(join(tmpdir(), 'payouts-'));
  beforeAll(async () => {
    database = (await databaseFor(engine)).database;
    gw = await startTestGateway(engine, { database });
  });
  afterAll(async () => gw?.close());

  const cli = (args: string[], env: Record<string, string> = {}) => gatewayCli([...args, '--database', database], env);
  const json = async (...args: string[]) => {
    const r = await cli([...args, '--json'], FILE_ENV);
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as Record<string, string>;
  };
  async function fundedWallet(currency: string, amount: string): Promise<MerchantCredentials> {
    const m = await gw.newMerchant(currency);
    if (currency === 'AUD') await gw.store.accounts.setRate('AUD', 'CNY', 4_700_000, Date.now());
    const { order_id } = await gw.create({ amount }, m);
    expect((await gw.pay(order_id, 'paid')).status).toBe('paid');
    await json('settlement', 'set', '--wallet-id', m.wallet_id, '--delay-days', '0');
    await runSettlement(gw.store, Date.now() + 1);
    return m;
  }
  const balances = (m: MerchantCredentials, currency = 'NZD') => gw.store.ledger.walletBalances(m.wallet_id, currency);

  it('NZD: add, verify, request, approve, batch into the IB4B file, paid; another returned goes back to available', async () => {
    const m = await fundedWallet('NZD', '500.00');
    const bad = await cli([
      'bank-account',
      'add',
      '--wallet-id',
      m.wallet_id,
      '--holder',
      'Kiwi Cafe',
      '--nz-account',
      '01-0902-0068398-00',
    ]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/check digits/);
    const account = await json(
      'bank-account',
      'add',
      '--wallet-id',
      m.wallet_id,
      '--holder',
      'Kiwi Cafe',
      '--nz-account',
      '01-0902-0068389-00',
    );
    expect(account).toMatchObject({ id: expect.stringMatching(/^B/), account: '01-0902-0068389-00', verified: false });
    // Not verified: no payout.
    const early = await cli(['payout', 'request', '--wallet-id', m.wallet_id, '--amount', '100.00']);
    expect(early.stderr).toMatch(/no verified bank account/);
    expect(await json('bank-account', 'verify', '--id', account.id)).toMatchObject({
      verified: true,
      account: '01-0902-****389-00',
    });
    const tooMuch = await cli(['payout', 'request', '--wallet-id', m.wallet_id, '--amount', '500.01']);
    expect(tooMuch.stderr).toMatch(/has 500\.00 NZD available: a payout of 500\.01 NZD needs more \(559/);

    const first = await json('payout', 'request', '--wallet-id', m.wallet_id, '--amount', '300.00');
    const second = await json('payout', 'request', '--wallet-id', m.wallet_id, '--amount', '150.00');
    expect(first).toMatchObject({
      id: expect.stringMatching(/^P/),
      status: 'requested',
      amount: '300.00',
      fee: '0.00',
    });
    expect(await balances(m)).toMatchObject({ available: 5000, reserved: 45000 });
    // Not approved yet: not in a batch, and cannot be marked paid.
    const notYet = await cli(['payout', 'paid', '--id', first.id]);
    expect(notYet.stderr).toMatch(/is requested: it cannot be paid/);
    await json('payout', 'approve', '--id', first.id);
    await json('payout', 'approve', '--id', second.id);
    const out = join(dir, `${engine}-nz.csv`);
    const batch = await json('payout', 'batch', '--currency', 'NZD', '--out', out);
    expect(batch).toMatchObject({ currency: 'NZD', format: 'nz-csv', payouts: 2, total: '450.00' });
    const rows = readFileSync(out, 'utf8').split('\r\n');
    expect(rows[0]).toMatch(/^1,,,,3890160704505000,7,\d{6},\d{6},$/);
    expect(rows.slice(1, 3).map((r) => r.split(',').slice(0, 5))).toEqual([
      ['2', '0109020068389000', '50', '30000', 'Kiwi Cafe'],
      ['2', '0109020068389000', '50', '15000', 'Kiwi Cafe'],
    ]);
    expect(rows[3]).toBe('3,45000,2,18040136778');
    expect(await balances(m)).toMatchObject({ available: 5000, reserved: 0 });
    // The same file again; a batch with nothing approved writes nothing.
    const again = join(dir, `${engine}-nz-again.csv`);
    await json('payout', 'file', '--batch-id', batch.batch_id, '--out', again);
    expect(readFileSync(again, 'utf8')).toBe(readFileSync(out, 'utf8'));
    const none = await cli(
      ['payout', 'batch', '--currency', 'NZD', '--out', join(dir, `${engine}-none.csv`)],
      FILE_ENV,
    );
    expect(none.stdout).toMatch(/no approved payouts/);

    await json('payout', 'paid', '--id', first.id);
    const returned = await cli(['payout', 'returned', '--id', second.id]);
    expect(returned.code).not.toBe(0); // --reason is required
    expect(await json('payout', 'returned', '--id', second.id, '--reason', 'account closed')).toMatchObject({
      status: 'returned',
      return_reason: 'account closed',
    });
    expect(await balances(m)).toEqual({ currency: 'NZD', pending: 0, available: 20000, reserved: 0 });
    const twice = await cli(['payout', 'paid', '--id', first.id]);
    expect(twice.stderr).toMatch(/is paid: it cannot be paid/);
    const kinds = async (payout_id: string) =>
      (
        await gw.store.db
          .selectFrom('ledger_entries')
          .select('kind')
          .where('payout_id', '=', payout_id)
          .orderBy('created_at')
          .execute()
      ).map((e) => e.kind);
    expect(await kinds(first.id)).toEqual(['payout_requested', 'payout_sent', 'payout_paid']);
    expect(await kinds(second.id)).toEqual(['payout_requested', 'payout_sent', 'payout_returned']);
    const paidLines = await gw.store.db
      .selectFrom('ledger_lines')
      .selectAll()
      .where('entry_key', '=', `payout_paid:${first.id}`)
      .execute();
    expect(paidLines.map((l) => [l.account, Number(l.amount)])).toEqual([
      [PAYOUTS_IN_TRANSIT, 30000],
      [OPERATOR_BANK, -30000],
    ]);
    expect((await gw.store.ledger.check()).problems).toEqual([]);
  }, 90_000); // a dozen `gateway` processes, each a second or two on a busy machine

  it('AUD: the ABA file keeps the format rules; a payout fee from the wallet`s payout plan; a canceled payout goes back', async () => {
    const m = await fundedWallet('AUD', '400.00');
    const fee = await json(
      'fees',
      'set',
      '--wallet-id',
      m.wallet_id,
      '--method',
      'payout',
      '--percent',
      '0',
      '--fixed',
      '25',
    );
    expect(fee).toMatchObject({ payment_method: 'payout', fixed: '25.00' });
    const account = await json(
      'bank-account',
      'add',
      '--wallet-id',
      m.wallet_id,
      '--holder',
      'Roo Pty Ltd',
      '--bsb',
      '062000',
      '--account-number',
      '12345678',
    );
    await json('bank-account', 'verify', '--id', account.id);
    const p = await json('payout', 'request', '--wallet-id', m.wallet_id, '--amount', '300.00');
    expect(p).toMatchObject({ amount: '300.00', fee: '25.00' });
    const c = await json('payout', 'request', '--wallet-id', m.wallet_id, '--amount', '50.00');
    expect(await balances(m, 'AUD')).toMatchObject({ available: 40000 - 32500 - 7500, reserved: 40000 });
    expect(await json('payout', 'cancel', '--id', c.id)).toMatchObject({ status: 'canceled' });
    expect(await balances(m, 'AUD')).toMatchObject({ available: 7500, reserved: 32500 });
    await json('payout', 'approve', '--id', p.id);
    // Without the operator's settings, nothing moves.
    const unset = await cli(['payout', 'batch', '--currency', 'AUD', '--out', join(dir, `${engine}-unset.aba`)]);
    expect(unset.stderr).toMatch(/PAYOUT_ABA_USER_ID/);
    expect((await gw.store.payouts.find(p.id))?.payout_status).toBe('approved');
    const out = join(dir, `${engine}.aba`);
    expect(await json('payout', 'batch', '--currency', 'AUD', '--out', out)).toMatchObject({
      format: 'aba',
      total: '300.00',
    });
    const file = readFileSync(out, 'utf8');
    expect(abaProblems(file)).toEqual([]);
    expect(file.split('\r\n')[1].slice(0, 62)).toBe(`1062-000 12345678 500000030000${'Roo Pty Ltd'.padEnd(32)}`);
    await json('payout', 'paid', '--id', p.id);
    expect(await balances(m, 'AUD')).toEqual({ currency: 'AUD', pending: 0, available: 7500, reserved: 0 });
    expect((await gw.store.ledger.check()).problems).toEqual([]);
  }, 90_000); // a dozen `gateway` processes, each a second or two on a busy machine

  it('payouts and refunds at once never take more than the wallet holds', async () => {
    const m = await fundedWallet('NZD', '100.00');
    const account = await addBankAccount(gw.store, {
      wallet_id: m.wallet_id,
      holder: 'Kiwi Cafe',
      nz_account: '01-0902-0068389-00',
      by: 'test',
      now: Date.now(),
    });
    await verifyBankAccount(gw.store, account.bank_account_id, 'test', Date.now());
    const { order_id } = await gw.create({ amount: '100.00' }, m);
    await gw.pay(order_id, 'paid'); // 100.00 pending beside the 100.00 available
    const payouts = Array.from({ length: 6 }, () =>
      requestPayout(gw.store, { wallet_id: m.wallet_id, amount: '30.00', by: 'test', now: Date.now() }).then(
        () => 'paid out',
        (e: Error) => e.message,
      ),
    );
    const refunds = Array.from({ length: 4 }, (_, i) =>
      gw.post('/refund', refundBody(gw, order_id, '30.00', `r${i}`, m)).then((r: { code: number }) => r.code),
    );
    const results = await Promise.all([...payouts, ...refunds]);
    const b = await balances(m);
    expect(b.pending).toBeGreaterThanOrEqual(0);
    expect(b.available).toBeGreaterThanOrEqual(0);
    // Three payouts fit the 100.00 available, three refunds the order (90.00 of 100.00); refunds take
    // pending first, then what the payouts left.
    expect(results.filter((r) => r === 'paid out')).toHaveLength(3);
    expect(results.filter((r) => r === 0)).toHaveLength(3);
    expect(b).toEqual({ currency: 'NZD', pending: 1000, available: 1000, reserved: 9000 });
    expect((await gw.store.ledger.check()).problems).toEqual([]);
  });

  it('automatic payout: once a day above its threshold, what is above the float less its fee; skipped without a verified account', async () => {
    const m = await fundedWallet('NZD', '500.00');
    const day = 86_400_000;
    const today = Date.now() - (Date.now() % day);
    await json('fees', 'set', '--wallet-id', m.wallet_id, '--method', 'payout', '--percent', '1', '--fixed', '0.50');
    // Bad settings are refused with why; nothing set.
    const keepMore = await cli(['payout', 'auto', '--wallet-id', m.wallet_id, '--above', '100', '--keep', '150']);
    expect(keepMore.stderr).toMatch(/--keep must not be more than --above/);
    const notAmount = await cli(['payout', 'auto', '--wallet-id', m.wallet_id, '--above', 'lots']);
    expect(notAmount.stderr).toMatch(/--above/);
    const cny = await gw.newMerchant('CNY');
    expect((await cli(['payout', 'auto', '--wallet-id', cny.wallet_id, '--above', '100'])).stderr).toMatch(
      /payouts are paid in AUD or NZD/,
    );
    expect(await json('payout', 'auto', '--wallet-id', m.wallet_id)).toMatchObject({ auto_payout: false });

    // Above the balance: nothing, and nothing recorded (tried again on the next run).
    await json('payout', 'auto', '--wallet-id', m.wallet_id, '--above', '600.00');
    expect(await runAutoPayouts(gw.store, today + 1000)).toEqual([]);
    expect(
      await json('payout', 'auto', '--wallet-id', m.wallet_id, '--above', '100.00', '--keep', '20.00'),
    ).toMatchObject({ auto_payout: true, above: '100.00', keep: '20.00' });
    // No verified account: skipped for the day, with why, once (by this run, or by the gateway's
    // own job if its minute came first).
    const skipped = (await json('settlement', 'run')).auto_payouts as unknown as unknown[];
    const why = { wallet_id: m.wallet_id, skipped: expect.stringMatching(/no verified bank account/) };
    expect(skipped.length === 0 ? [why] : skipped).toEqual([why]);
    expect(await runAutoPayouts(gw.store, Date.now())).toEqual([]);
    expect((await gw.store.payouts.autoPayoutDays(m.wallet_id, 1))[0]).toMatchObject({
      day: today,
      payout_id: null,
      note: expect.stringMatching(/no verified bank account/),
    });
    const account = await addBankAccount(gw.store, {
      wallet_id: m.wallet_id,
      holder: 'Kiwi Cafe',
      nz_account: '01-0902-0068389-00',
      by: 'test',
      now: Date.now(),
    });
    await verifyBankAccount(gw.store, account.bank_account_id, 'test', Date.now());

    // The next day, on two runs at once (two instances): one payout. 480.00 may leave: 474.75 and a
    // fee of 1 % (4.75, half up) + 0.50; 474.76 would need 480.01.
    const tomorrow = today + day + 60_000;
    const runs = await Promise.all([runAutoPayouts(gw.store, tomorrow), runAutoPayouts(gw.store, tomorrow)]);
    const made = runs.flat();
    expect(made).toHaveLength(1);
    const payout = (made[0] as { payout: Payout }).payout;
    expect(payout).toMatchObject({
      wallet_id: m.wallet_id,
      bank_account_id: account.bank_account_id,
      amount: 47475,
      fee: 525,
      payout_status: 'requested',
      requested_by: 'auto',
    });
    expect(payout.payout_id.length).toBeLessThanOrEqual(12);
    expect(await balances(m)).toMatchObject({ available: 2000, reserved: 48000 });
    // The day's key holds on its own, also for a payout the balance could cover.
    const again = { ...payout, payout_id: 'Pagain00001', amount: 100, fee: 0 };
    expect(await gw.store.payouts.request(again, today + day)).toEqual({ ok: false, already: true });
    expect(await gw.store.payouts.find(again.payout_id)).toBeUndefined();
    // More money the same day: no second payout until the next.
    const { order_id } = await gw.create({ amount: '300.00' }, m);
    await gw.pay(order_id, 'paid');
    await runSettlement(gw.store, tomorrow + 1);
    expect(await runAutoPayouts(gw.store, tomorrow + 2)).toEqual([]);
    const next = await runAutoPayouts(gw.store, tomorrow + day);
    expect(next).toHaveLength(1);
    expect((next[0] as { payout: Payout }).payout).toMatchObject({ amount: 29653, fee: 347 });
    const days = await gw.store.payouts.autoPayoutDays(m.wallet_id, 10);
    expect(days.map((d) => [d.day, d.payout_id, d.note !== null])).toEqual([
      [today + 2 * day, (next[0] as { payout: Payout }).payout.payout_id, false],
      [today + day, payout.payout_id, false],
      [today, null, true],
    ]);
    // An operator approves it as any other; turned off, no more.
    expect(await json('payout', 'approve', '--id', payout.payout_id)).toMatchObject({ status: 'approved' });
    expect(await json('payout', 'auto', '--wallet-id', m.wallet_id, '--above', 'off')).toMatchObject({
      auto_payout: false,
    });
    expect(await runAutoPayouts(gw.store, tomorrow + 3 * day)).toEqual([]);
    expect((await gw.store.ledger.check()).problems).toEqual([]);
  });
});

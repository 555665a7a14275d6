import { inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { clearingDay, zmFile, zmFileContent } from '../../../test/support/fake-unionpay-zm.js';
import { StatementFormatError } from '../../domain/reconciliation.js';
import type { ChannelAccount } from '../../ports/connector.js';
import { fileEndpointOf, readUnionpayZm } from './statement.js';

// UnionPay's ZM file as its specification lays it out (written by the tests' fake): fixed-width
// GBK fields cut by bytes, in a zip, deflated, base64 in the file transfer's answer.
const MER = '777290058110048';
const at = Date.parse('2026-01-01T10:30:05+08:00');
const day = clearingDay(at);
const zip = (zm: Buffer) => new Uint8Array(inflateSync(Buffer.from(zmFileContent(MER, day, zm), 'base64')));
const account = (config: Record<string, string>) => ({ config }) as unknown as ChannelAccount;

describe("UnionPay's ZM file", () => {
  const file = zmFile(MER, day, [
    { txnType: '01', orderId: 'O2026010100001F', queryId: '782209081322060674001', txnAmt: 10_000, at },
    {
      txnType: '04',
      orderId: 'R2026010100001',
      queryId: '782209081322060674002',
      txnAmt: 3_000,
      origQryId: '782209081322060674001',
      at: at + 60_000,
    },
    {
      txnType: '31',
      orderId: 'R2026010100002V',
      queryId: '782209081322060674003',
      txnAmt: 2_000,
      origQryId: '782209081322060674009',
      at: at + 120_000,
    },
    // A December payment in a January file: last year's.
    {
      txnType: '01',
      orderId: 'O2025123100009F',
      queryId: '782209081322060674004',
      txnAmt: 500,
      at: at - 11 * 3600_000,
    },
  ]);

  it('reads consumes, refunds and revokes by their bytes, fees with their C or D, times in Beijing', () => {
    const lines = [...readUnionpayZm(zip(file))];
    expect(lines.map((l) => [l.kind, l.out_trade_no, l.refund_id, l.amount, l.fee, l.status])).toEqual([
      ['payment', 'O2025123100009F', null, 500, 3, 'consume'],
      ['payment', 'O2026010100001F', null, 10_000, 50, 'consume'],
      ['refund', '', 'R2026010100001', 3_000, -15, 'refund of 782209081322060674001'],
      ['refund', '', 'R2026010100002', 2_000, -10, 'revoke of 782209081322060674009'],
    ]);
    expect(lines[0].occurred_at).toBe(at - 11 * 3600_000);
    expect(lines[1]).toMatchObject({ provider_ref: '782209081322060674001', currency: 'CNY', occurred_at: at });
    // The bare ZM file reads the same.
    expect([...readUnionpayZm(new Uint8Array(file), undefined, at)]).toHaveLength(4);
  });

  it("a cross-border account's lines are in its currency", () => {
    const lines = [...readUnionpayZm(zip(file), account({ currency_mode: 'cross-border', currency: 'NZD' }))];
    expect(new Set(lines.map((l) => l.currency))).toEqual(new Set(['NZD']));
  });

  it('refuses a line cut short, an amount that is not digits, a zip without a ZM file', () => {
    const cut = Buffer.from(file.subarray(0, 200));
    expect(() => [...readUnionpayZm(new Uint8Array(cut), undefined, at)]).toThrow(/line 1 ends at byte 200/);
    const bad = Buffer.from(file);
    bad.write('12x', 66, 'latin1');
    expect(() => [...readUnionpayZm(new Uint8Array(bad), undefined, at)]).toThrow(StatementFormatError);
    expect(() => [...readUnionpayZm(new Uint8Array([0x50, 0x4b, 3, 4, 0]))]).toThrow(/not a zip/);
  });

  it("asks UnionPay's file host beside its gateway; any other endpoint serves both", () => {
    expect(fileEndpointOf(account({}))).toBe('https://filedownload.95516.com');
    expect(fileEndpointOf(account({ endpoint: 'https://gateway.test.95516.com/' }))).toBe(
      'https://filedownload.test.95516.com',
    );
    expect(fileEndpointOf(account({ endpoint: 'http://127.0.0.1:4000' }))).toBe('http://127.0.0.1:4000');
  });
});

import { describe, expect, it } from 'vitest';
import { readWechatpayBill } from './statement.js';

// A trade bill (bill_type ALL) laid out as WeChat Pay's: a payment, a refund of part of it, a
// revoked payment, the summary; with the BOM and CRLF some bills have.
const BILL = [
  '\uFEFF交易时间,公众账号ID,商户号,特约商户号,设备号,微信订单号,商户订单号,用户标识,交易类型,交易状态,付款银行,货币种类,应结订单金额,代金券金额,微信退款单号,商户退款单号,退款金额,充值券退款金额,退款类型,退款状态,商品名称,商户数据包,手续费,费率,订单金额,申请退款金额,费率备注',
  '`2024-05-20 10:15:32,`wx1234567890abcdef,`1900000001,`0,`,`4200002201202405201234567890,`ORD20240520001,`oUpF8uMuAJO_M2pxb1Q9zNjWeS6o,`NATIVE,`SUCCESS,`OTHERS,`CNY,`100.00,`0.00,`0,`0,`0.00,`0.00,`,`,`会员月卡,`,`0.60000,`0.60%,`100.00,`0.00,`',
  '`2024-05-20 16:02:11,`wx1234567890abcdef,`1900000001,`0,`,`4200002201202405201234567890,`ORD20240520001,`oUpF8uMuAJO_M2pxb1Q9zNjWeS6o,`NATIVE,`REFUND,`OTHERS,`CNY,`0.00,`0.00,`50300908012024052012345678901,`RF20240520001,`30.00,`0.00,`ORIGINAL,`SUCCESS,`会员月卡,`,`-0.18000,`0.60%,`0.00,`30.00,`',
  '`2024-05-20 17:00:00,`wx1234567890abcdef,`1900000001,`0,`,`4200002201202405201234567899,`ORD20240520002,`oUpF8uMuAJO_M2pxb1Q9zNjWeS6o,`MICROPAY,`REVOKED,`OTHERS,`CNY,`0.00,`0.00,`0,`0,`0.00,`0.00,`,`,`会员月卡,`,`0.00000,`0.60%,`5.00,`0.00,`',
  '总交易单数,应结订单总金额,退款总金额,充值券退款总金额,手续费总金额,订单总金额,申请退款总金额',
  '`3,`100.00,`30.00,`0.00,`0.42000,`105.00,`30.00',
  '',
].join('\r\n');

describe("WeChat Pay's trade bill", () => {
  it('reads payments and refunds: backticked fields, five-decimal fees, Beijing times; a revoked payment is not a line', () => {
    expect([...readWechatpayBill(new TextEncoder().encode(BILL))]).toEqual([
      {
        line_no: 1,
        kind: 'payment',
        provider_ref: '4200002201202405201234567890',
        out_trade_no: 'ORD20240520001',
        refund_id: null,
        amount: 10000,
        currency: 'CNY',
        fee: 60,
        occurred_at: Date.UTC(2024, 4, 20, 2, 15, 32),
        status: 'SUCCESS',
      },
      {
        line_no: 2,
        kind: 'refund',
        provider_ref: '4200002201202405201234567890',
        out_trade_no: 'ORD20240520001',
        refund_id: 'RF20240520001',
        amount: 3000,
        currency: 'CNY',
        fee: -18,
        occurred_at: Date.UTC(2024, 4, 20, 8, 2, 11),
        status: 'REFUND SUCCESS',
      },
    ]);
  });

  it('refuses a bill cut short or whose count disagrees', () => {
    expect(() => [...readWechatpayBill(BILL.split('\r\n').slice(0, 3).join('\r\n'))]).toThrow(/cut short/);
    expect(() => [...readWechatpayBill(BILL.replace('`3,`100.00', '`4,`100.00'))]).toThrow(
      /counts 4 lines; the file has 3/,
    );
    expect(() => [...readWechatpayBill(BILL.replace('商户订单号', '订单号'))]).toThrow(/no column 商户订单号/);
  });
});

import { zipSync } from 'fflate';
import iconv from 'iconv-lite';
import { describe, expect, it } from 'vitest';
import { StatementFormatError } from '../../domain/reconciliation.js';
import { readAlipayBill } from './statement.js';

// A trade bill laid out as Alipay's (a real 2019 bill's lines, its totals made to agree), in GBK,
// zipped beside its summary file.
const T = '\t';
const DETAIL = [
  '#支付宝业务明细查询',
  '#账号：[20880211096256330156]',
  '#起始日期：[2019年09月16日 00:00:00]   终止日期：[2019年09月17日 00:00:00]',
  `#${'-'.repeat(41)}业务明细列表${'-'.repeat(40)}`,
  '支付宝交易号,商户订单号,业务类型,商品名称,创建时间,完成时间,门店编号,门店名称,操作员,终端号,对方账户,订单金额（元）,商家实收（元）,支付宝红包（元）,集分宝（元）,支付宝优惠（元）,商家优惠（元）,券核销金额（元）,券名称,商家红包消费金额（元）,卡消费金额（元）,退款批次号/请求号,服务费（元）,分润（元）,备注',
  `2019091622001458860515315453${T},service_1568601259302${T},交易${T},下单测试,2019-09-16 10:55:16,2019-09-16 10:55:23,alipay_store${T},alipay_store${T},alipay${T},${T},*津水(602***@qq.com)${T},120.50,120.50,0.00,0.00,0.00,0.00,0.00,,0.00${T},0.00,${T},-0.72,0.00,下单测试`,
  `2019091622001458860515315453${T},service_1568601259302${T},退款${T},下单测试,2019-09-16 10:55:16,2019-09-16 10:56:48,alipay_store${T},alipay_store${T},alipay${T},${T},*津水(602***@qq.com)${T},-20.00,-20.00,0.00,0.00,0.00,0.00,0.00,,0.00${T},0.00,re_test_1568602607356${T},0.12,0.00,下单测试`,
  `#${'-'.repeat(41)}业务明细列表结束${'-'.repeat(36)}`,
  '#交易合计：1笔，商家实收共120.50元，商家优惠共0.00元',
  '#退款合计：1笔，商家实收退款共-20.00元，商家优惠退款共0.00元',
  '#导出时间：[2019年09月17日 05:46:49]',
].join('\r\n');
const SUMMARY = ['#支付宝业务汇总查询', '门店编号,门店名称,交易订单总笔数', '合计,,1'].join('\r\n');

function billZip(detail: string): Uint8Array {
  return zipSync({
    '20880211096256330156_20190916_业务明细.csv': iconv.encode(detail, 'gbk'),
    '20880211096256330156_20190916_业务明细(汇总).csv': iconv.encode(SUMMARY, 'gbk'),
  });
}

describe("Alipay's trade bill", () => {
  it('reads trades and refunds from the GBK zip: ids, amounts, fees, Beijing times', () => {
    expect([...readAlipayBill(billZip(DETAIL))]).toEqual([
      {
        line_no: 1,
        kind: 'payment',
        provider_ref: '2019091622001458860515315453',
        out_trade_no: 'service_1568601259302',
        refund_id: null,
        amount: 12050,
        currency: 'CNY',
        fee: 72,
        occurred_at: Date.UTC(2019, 8, 16, 2, 55, 23),
        status: '交易',
      },
      {
        line_no: 2,
        kind: 'refund',
        provider_ref: '2019091622001458860515315453',
        out_trade_no: 'service_1568601259302',
        refund_id: 're_test_1568602607356',
        amount: 2000,
        currency: 'CNY',
        fee: -12,
        occurred_at: Date.UTC(2019, 8, 16, 2, 56, 48),
        status: '退款',
      },
    ]);
  });

  it('refuses a file that is not the bill, a cut one, and totals that disagree', () => {
    expect(() => [...readAlipayBill(new TextEncoder().encode('not a zip'))]).toThrow(StatementFormatError);
    expect(() => [...readAlipayBill(zipSync({ 'x.csv': iconv.encode(SUMMARY, 'gbk') }))]).toThrow(/no detail file/);
    expect(() => [...readAlipayBill(billZip(DETAIL.replace('#交易合计：1笔', '#交易合计：2笔')))]).toThrow(
      /the totals say 2 trades/,
    );
    expect(() => [...readAlipayBill(billZip(DETAIL.replace(',120.50,120.50,', ',12O.50,120.50,')))]).toThrow(
      /订单金额 is not an amount/,
    );
    expect(() => [...readAlipayBill(billZip(DETAIL.replace('订单金额（元）', '金额')))]).toThrow(/no column 订单金额/);
  });
});

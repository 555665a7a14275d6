import type { ErrorCode } from '../../domain/errors.js';

// The API's result codes explained in Chinese, for the console's Chinese pages: the API itself
// answers the original service's English texts (clients compare them), which a refused refund or
// cancel shows as well, after this.

export const API_CODES_ZH: Readonly<Record<ErrorCode, string>> = {
  1: '处理失败',
  3: '数据错误',
  110: '用户不存在',
  201: '订单不存在',
  204: '必填字段为空',
  205: '找不到该用户的密钥，或用户已停用',
  206: '商户请求的签名错误',
  207: '参数错误',
  300: '网关不存在',
  301: '账户或币种信息错误（钱包可能已停用）',
  302: '没有支付机构为此支付方式服务',
  303: '商户的支付类型错误',
  304: '钱包不支持此支付方式',
  305: '商户没有费率方案',
  450: '钱包未分配给该用户',
  454: '超过商户单笔支付限额',
  550: '退款参数错误',
  551: '退款对应的订单不存在',
  556: '创建退款单失败',
  558: '退款单不存在',
  559: '可退金额不足',
  562: '该退款请求已处理',
  900: '交易已成功完成',
  901: '交易已失败',
};

import { fail } from '../domain/errors.js';
import { exponentOf, formatAmount, formatRate } from '../domain/money.js';
import { qrPngDataUri } from '../domain/qr-png.js';
import { gatewayDataSignature } from '../domain/signing.js';
import { endedCode, isFinal } from '../domain/transaction.js';
import { openMerchantHostedQr, qrOf } from './channels.js';
import type { GatewayContext } from './context.js';

export interface GatewayDataResponse {
  code: 0;
  message: 'SUCCESS';
  data: Record<string, string | number | null>;
}

/** GET {host_url}/{nonce} for merchant-hosted QR: the order data and QR picture, signed. Uses up the nonce. */
export async function getGatewayData(ctx: GatewayContext, nonce: string): Promise<GatewayDataResponse> {
  const use = await ctx.store.transactions.useNonce(nonce, ctx.now(), 1);
  if (!use.ok) {
    if (use.reason === 'unknown') fail(201, 'no merchant-hosted order has this nonce');
    if (use.reason === 'used')
      fail(3, 'this nonce has already been used; create the transaction again for a fresh nonce');
    fail(3, 'this nonce has expired; create the transaction again for a fresh nonce');
  }
  const t = use.transaction;
  const status = t.status;
  if (isFinal(status)) {
    const code = endedCode(status);
    fail(code, code === 900 ? `order ${t.order_id} is already paid` : `order ${t.order_id} has ended as ${status}`);
  }

  const [user, wallet] = await Promise.all([ctx.credentials.user(t.user_id), ctx.credentials.wallet(t.wallet_id)]);
  if (!user || !wallet) fail(301, 'the merchant account of this order no longer exists');
  // A provider's QR is stored by the create that opened it, and acknowledged before it is on disk
  // (TransactionsRepo.setPaymentPayload): one a crash took back is asked for again, with the same
  // out_trade_no, which the provider answers with the same payment.
  const qr_code_url = t.qr_code_url ?? (t.channel === 'sandbox' ? '' : qrOf(t, await openMerchantHostedQr(ctx, t)));
  const data: Record<string, string | number | null> = {
    order_id: t.order_id,
    nonce,
    payment_method: t.payment_method,
    amount: formatAmount(t.amount, exponentOf(t.currency)),
    amount_cny: t.amount_cny === null ? null : formatAmount(t.amount_cny, exponentOf('CNY')),
    currency: t.currency,
    product_name: t.product_name,
    organisation_id: user.organisation_id,
    organisation_name: user.organisation_name,
    user_id: user.user_id,
    user_name: user.user_name,
    wallet_id: wallet.wallet_id,
    wallet_name: wallet.wallet_name,
    qr_code: qrPngDataUri(qr_code_url, { errorCorrectionLevel: 'M', margin: 2, width: 256 }),
    qr_code_url,
    currency_rate: t.currency_rate === null ? null : formatRate(t.currency_rate, 6),
    merchant_reference: t.merchant_reference,
  };
  data.signature = gatewayDataSignature(data, wallet.api_key);
  return { code: 0, message: 'SUCCESS', data };
}

import { walletDetailMessageCandidates } from '../domain/signing.js';
import { walletMethods } from '../domain/account.js';
import { DETAIL_METHOD_NAMES } from '../domain/transaction.js';
import { requireActiveUser, requireUserWallet } from './authenticate.js';
import type { GatewayContext } from './context.js';

// GET /v2/detail/{wallet_id}: which payment methods a wallet takes. Not in the spec; the original
// service's shop plugins call it when the shop is configured and offer only the methods it lists.

export interface WalletDetailRequest {
  wallet_id: string;
  user_id: string;
  /** Absent (or empty) for an unsigned request, as the Magento plugins send it. */
  signature?: string | undefined;
}

export interface WalletDetailResponse {
  code: 0;
  message: 'SUCCESS';
  /** The methods, comma-separated, spelled as DETAIL_METHOD_NAMES says. */
  payment_method: string;
}

/**
 * Answers a signed request (wallet_id + user_id, or the sorted form) and an unsigned one alike: the
 * list tells only what the shop's own checkout page shows anyone (docs/decisions.md). A signature
 * that is sent must verify (206). Unknown user 110, disabled 205, unknown wallet 301, another
 * user's wallet 450, checked in that order as for a create.
 */
export async function walletDetail(ctx: GatewayContext, req: WalletDetailRequest): Promise<WalletDetailResponse> {
  const user = await requireActiveUser(ctx, req.user_id);
  const signature = req.signature || undefined;
  const signed =
    signature === undefined
      ? undefined
      : {
          signature,
          messagesFor: (_w: unknown, key: string) =>
            walletDetailMessageCandidates({ wallet_id: req.wallet_id, user_id: req.user_id }, key),
        };
  const wallet = await requireUserWallet(ctx, user.user_id, req.wallet_id, signed);
  const names = walletMethods(wallet).map((m) => DETAIL_METHOD_NAMES[m]);
  return { code: 0, message: 'SUCCESS', payment_method: names.join(',') };
}

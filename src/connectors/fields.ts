import { CURRENCY_MODES, type CurrencyMode } from '../domain/channel.js';
import { AccountInputError, type AccountField, type AccountFieldKind, type Label } from '../ports/provider.js';
import type { NotificationReply } from '../ports/connector.js';

// What the connectors share: the fields every provider's account may have, a shorthand for the
// rest (descriptor.ts in each connector's folder), and the plain acknowledgement of a notification.

/** A field: `secret` follows from its kind (a private key, a secret, a file's bytes) unless told. */
export function accountField(
  id: string,
  kind: AccountFieldKind,
  cli: { flag: string; file?: boolean; value: string },
  label: Label,
  help: Label,
  more: Partial<Pick<AccountField, 'required' | 'alternative' | 'choices' | 'secret'>> = {},
): AccountField {
  return {
    id,
    kind,
    secret: more.secret ?? (kind === 'private_key' || kind === 'secret' || kind === 'binary'),
    required: more.required ?? true,
    ...(more.alternative !== undefined && { alternative: more.alternative }),
    ...(more.choices !== undefined && { choices: more.choices }),
    cli: { flag: cli.flag, file: cli.file ?? false, value: cli.value },
    label,
    help,
  };
}

/** How the account charges: domestic (CNY, at the order's rate) or cross-border (the wallet's currency). */
export function currencyModeField(modes: readonly CurrencyMode[] = CURRENCY_MODES): AccountField {
  return accountField(
    'currency_mode',
    'choice',
    { flag: 'currency-mode', value: modes.join('|') },
    { en: 'Currency mode', zh: '币种模式' },
    {
      en: "domestic charges CNY at the rate set with `gateway rates set`; cross-border charges the wallet's currency",
      zh: 'domestic：按 `gateway rates set` 设置的汇率以人民币收款；cross-border：以钱包币种收款',
    },
    { required: false, choices: modes },
  );
}

/** The provider's API address, when it is not the production one (its sandbox, a test double). */
export function endpointField(): AccountField {
  return accountField(
    'endpoint',
    'url',
    { flag: 'endpoint', value: 'URL' },
    { en: 'Endpoint', zh: '接口地址' },
    {
      en: "the provider's API address (its sandbox, say); empty for production",
      zh: '支付机构接口地址（如沙箱）；生产环境留空',
    },
    { required: false },
  );
}

/** A stored account's field that parseAccount cannot do without: its value, or an AccountInputError naming it. */
export function required(id: string, v: string | undefined): string {
  if (!v) throw new AccountInputError(id, 'is required');
  return v;
}

/**
 * The answer to a provider whose notification is acknowledged by HTTP 200 alone (POLi, Azupay,
 * CoinPayments, UnionPay): anything else is sent again. `ok`: the body it expects, if any.
 */
export function plainNotificationReply(accepted: boolean, ok = 'OK'): NotificationReply {
  return { status: accepted ? 200 : 500, contentType: 'text/plain; charset=utf-8', body: accepted ? ok : 'retry' };
}

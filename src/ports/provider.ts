import type { CurrencyMode } from '../domain/channel.js';
import type { PaymentMethod } from '../domain/transaction.js';
import type { ChannelAccount } from './connector.js';

// What the gateway knows of a payment provider besides its calls: its name, the methods it serves,
// and the account a wallet holds with it, field by field. Each connector's folder exports one
// (`descriptor.ts`); the CLI's `channel set` flags and help, the console's provider forms, the
// stored account's validation and the secrets to seal are all made from these.

/** A text in the console's two languages. */
export interface Label {
  readonly en: string;
  readonly zh: string;
}

/**
 * What a field holds, which says how it is read and checked:
 * - `text`: an id or a code, trimmed;
 * - `url`: an address (a provider's sandbox, say);
 * - `choice`: one of `choices`;
 * - `flag`: on or off (off leaves it out);
 * - `public_key`, `private_key`: a key as PEM or as the bare base64 some portals give (stored as PEM);
 * - `certificate`: a certificate as PEM;
 * - `secret`: a secret text (an API key, an AppSecret, a password), trimmed;
 * - `binary`: a file's bytes as base64 (a PKCS#12 file).
 */
export type AccountFieldKind =
  'text' | 'url' | 'choice' | 'flag' | 'public_key' | 'private_key' | 'certificate' | 'secret' | 'binary';

export interface AccountField {
  /** Its key in the stored account (the config, or for a secret the sealed secrets). */
  readonly id: string;
  readonly kind: AccountFieldKind;
  /** Sealed under the master key, never shown (a fingerprint only), never written back into a page. */
  readonly secret: boolean;
  /** Required, unless it belongs to an `alternative` (then that alternative's fields are). */
  readonly required: boolean;
  /**
   * Fields that stand for each other: one alternative's fields are given, not two (Alipay's public
   * key, or its three certificates). Giving a field of one drops the stored fields of the others.
   */
  readonly alternative?: string;
  /** A `choice`'s values. */
  readonly choices?: readonly string[];
  /** The CLI's flag (without dashes), and whether it names a file to read. */
  readonly cli: { readonly flag: string; readonly file: boolean; readonly value: string };
  readonly label: Label;
  /** A line of help for the CLI and the console. */
  readonly help: Label;
}

/** The fields an account is made from, as text (what the CLI read from its flags and files, or the form sent). */
export type AccountInput = Readonly<Record<string, string>>;

/** A field the account cannot be made with: its id, and what is wrong. */
export class AccountInputError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

export interface ProviderDescriptor<Config = unknown> {
  /** Its name in the CLI, the database and the notification address (`/channels/{name}/notify`). */
  readonly name: string;
  readonly label: Label;
  readonly methods: readonly PaymentMethod[];
  /** The currency modes its accounts may have (domestic: CNY at the order's rate; cross-border: the wallet's currency). */
  readonly currencyModes: readonly CurrencyMode[];
  /** The account's fields, in the order the CLI's help and the console's form show them. */
  readonly fields: readonly AccountField[];
  /** Config the account's fields imply (Alipay's key in certificate mode: its certificate's); stored with them. */
  derive?(config: Readonly<Record<string, string>>): Readonly<Record<string, string>>;
  /**
   * The stored account as the connector reads it, typed; throws AccountInputError naming a field that
   * is missing or malformed.
   */
  parseAccount(account: ChannelAccount): Config;
  /** What is wrong with an account beyond its fields' form (keys that do not pair, a chain that does not verify); empty when nothing is. */
  checkAccount(account: ChannelAccount, now: number): readonly string[];
}

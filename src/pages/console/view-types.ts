import type { Wallet } from '../../domain/account.js';

// The shapes the console's pages render. Pages depend on the domain only: the use cases' results
// fit these structurally, and the routes pass them through.

export interface OrganisationView {
  organisation_id: number;
  organisation_name: string;
  created_at: number;
  closed_at?: number | null;
}

/** A wallet as the console shows it: never its key. */
export type WalletView = Omit<Wallet, 'api_key' | 'previous_api_key'>;

export interface AttemptView {
  attempted_at: number;
  http_status: number | null;
  error: string | null;
}

/** Notifications to one callback host that are failing now, and how the last attempt failed. */
export interface HostHealthView {
  callback_host: string;
  failing: number;
  oldest_created_at: number;
  last: AttemptView | undefined;
}

export interface AuditRowView {
  at: number;
  actor: string;
  action: string;
  object: string | null;
  before: string | null;
  after: string | null;
}

export interface SessionView {
  session_hash: string;
  created_at: number;
  last_seen_at: number;
  ip: string | null;
}

export interface EnrolmentView {
  uri: string;
  secret: string;
  pending: string;
}

export type { SettlementLine as SettlementLineView } from '../../domain/settlement.js';

/** A text in the console's two languages. */
export interface LabelView {
  readonly en: string;
  readonly zh: string;
}

/** A payment provider as its account form shows it (from its descriptor, ports/provider.ts). */
export interface ProviderFormView {
  readonly name: string;
  readonly label: LabelView;
  readonly methods: readonly string[];
  readonly fields: ReadonlyArray<{
    readonly id: string;
    readonly kind: string;
    readonly secret: boolean;
    readonly required: boolean;
    readonly alternative?: string;
    readonly choices?: readonly string[];
    readonly label: LabelView;
    readonly help: LabelView;
  }>;
}

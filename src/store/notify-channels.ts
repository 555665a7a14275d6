/** PostgreSQL NOTIFY channel that carries the order_id of every status change (see PgStatusSignals). */
export const STATUS_NOTIFY_CHANNEL = 'gateway_status';

/** PostgreSQL NOTIFY channel that tells every instance to forget cached users, wallets and rates. */
export const ADMIN_NOTIFY_CHANNEL = 'gateway_admin';

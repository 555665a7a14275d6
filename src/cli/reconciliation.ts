import { readFileSync } from 'node:fs';
import { buildConnectors } from '../connectors/registry.js';
import { exponentOf, formatSignedAmount } from '../domain/money.js';
import { EXCEPTION_KIND_NAMES, type ExceptionKind } from '../domain/reconciliation.js';
import type { MoneyException } from '../ports/reconciliation.js';
import { LocalStatusSignals } from '../signals/status-signals.js';
import { AdminError } from '../usecases/administration.js';
import { openAccount } from '../usecases/channel-accounts.js';
import { DEFAULT_CONFIG, SILENT_LOG, type GatewayContext } from '../usecases/context.js';
import { CredentialCache } from '../usecases/credentials.js';
import { resolveWithNote } from '../usecases/money-exceptions.js';
import { importStatement } from '../usecases/reconciliation.js';
import { positiveEnv, required } from './args.js';
import { masterKeyFromEnv } from './channels.js';
import type { Command } from './command.js';
import { auditCli, osUser } from './console-users.js';
import type { SqlStore } from '../store/sql-store.js';
import { DATABASE_FLAG, JSON_FLAG, withStore } from './shared.js';

// Reconciliation from the command line: a day's statement imported by hand (fetched, or a file an
// operator downloaded), and the queue of money exceptions (usecases/reconciliation.ts,
// usecases/money-exceptions.ts).

const by = () => `cli:${osUser()}`;

/** What the import needs of a gateway: the store, the providers, the accounts opened with the master key. */
async function withContext<T>(store: SqlStore, fn: (ctx: GatewayContext) => Promise<T>): Promise<T> {
  const master = masterKeyFromEnv();
  const built = buildConnectors({
    publicUrl: () => process.env.PUBLIC_URL ?? '',
    sandboxState: async (order_id) => (await store.transactions.find(order_id))?.channel_state,
    timeoutMs: positiveEnv('PROVIDER_TIMEOUT_MS') ?? 10_000,
  });
  const now = () => Date.now();
  const ctx: GatewayContext = {
    store,
    credentials: new CredentialCache(store.accounts, 0, now, (stored) => openAccount(master, stored)),
    connectors: built.connectors,
    signals: new LocalStatusSignals(),
    config: { ...DEFAULT_CONFIG, publicUrl: process.env.PUBLIC_URL ?? '' },
    log: SILENT_LOG,
    now,
    ...(master && { masterKey: master }),
  };
  try {
    return await fn(ctx);
  } finally {
    await built.close();
  }
}

export const statementsImport: Command = {
  name: 'statements import',
  summary: "a provider's statement of a day, imported and matched against the gateway's records",
  description:
    "Fetched from the provider (or --file, a statement an operator downloaded, in the provider's own\nformat), its lines matched by payment and refund; what does not agree becomes an exception\n(gateway exceptions list). Importing an account's day again changes nothing. The day is the\nprovider's (Beijing time for Alipay and WeChat Pay). Exits 3 when the provider has not published it yet.",
  flags: [
    { name: 'wallet-id', type: 'string', value: 'W', help: 'a wallet the provider account serves', required: true },
    {
      name: 'method',
      type: 'string',
      value: 'M',
      help: 'its payment method (alipay, wechat, upi_upop, payid, polipay, coin_payments)',
      required: true,
    },
    { name: 'date', type: 'string', value: 'YYYY-MM-DD', help: "the statement's day", required: true },
    { name: 'file', type: 'string', value: 'PATH', help: "the statement's file, as the provider serves it" },
    DATABASE_FLAG,
    JSON_FLAG,
  ],
  environment: [
    { name: 'GATEWAY_MASTER_KEY', help: 'opens the provider account (or GATEWAY_MASTER_KEY_FILE)' },
    { name: 'PROVIDER_TIMEOUT_MS', help: "how long the provider's answer is waited for", default: '10000' },
  ],
  examples: [
    'gateway statements import --wallet-id W00000001 --method alipay --date 2026-11-28',
    'gateway statements import --wallet-id W00000001 --method wechat --date 2026-11-28 --file tradebill.csv',
  ],
  async run(v) {
    const file = typeof v.file === 'string' ? v.file : undefined;
    let bytes: Uint8Array | undefined;
    if (file !== undefined) {
      try {
        bytes = new Uint8Array(readFileSync(file));
      } catch (e) {
        throw new AdminError(`--file ${file}: ${(e as Error).message}`);
      }
    }
    const result = await withStore(v, (store) =>
      withContext(store, async (ctx) => {
        const done = await importStatement(ctx, {
          wallet_id: required(v, 'wallet-id'),
          method: required(v, 'method'),
          date: required(v, 'date'),
          ...(bytes && { file: bytes }),
          by: by(),
        });
        if (done.kind === 'imported')
          await auditCli(store, {
            action: 'cli.statements.import',
            object: done.statement.statement_id,
            after: JSON.stringify({ date: done.statement.statement_date, lines: done.statement.line_count }),
          });
        return done;
      }),
    );
    if (result.kind === 'not_ready') {
      if (v.json) console.log(JSON.stringify({ imported: false, reason: result.reason }));
      else console.error(`not published yet (or not reachable): ${result.reason}`);
      return 3;
    }
    const s = result.statement;
    const view = {
      imported: result.kind === 'imported',
      statement_id: s.statement_id,
      provider: s.provider,
      merchant_id: s.merchant_id,
      statement_date: s.statement_date,
      lines: s.line_count,
      matched: s.matched_count,
      exceptions: s.exception_count,
      fees: Object.fromEntries(
        Object.entries(JSON.parse(s.fees) as Record<string, number>).map(([c, m]) => [
          c,
          formatSignedAmount(m, exponentOf(c)),
        ]),
      ),
      raw_sha256: s.raw_sha256,
      asked: result.asked,
      settled: result.settled,
      new_exceptions: result.exceptions.map(exceptionView),
    };
    if (v.json) console.log(JSON.stringify(view, null, 2));
    else {
      console.log(
        `${view.imported ? 'imported' : 'imported before, nothing changed'}: ${s.provider} ${s.merchant_id} ${s.statement_date} (${s.statement_id})`,
      );
      console.log(`${view.lines} lines, ${view.matched} matched, ${view.exceptions} exceptions`);
      for (const e of view.new_exceptions) console.log(`  ${e.id} ${e.severity} ${e.kind}: ${e.detail}`);
    }
    return 0;
  },
};

function exceptionView(e: MoneyException) {
  return {
    id: e.exception_id,
    kind: e.kind,
    severity: e.severity,
    status: e.exception_status,
    source: e.source,
    provider: e.provider,
    wallet_id: e.wallet_id,
    order_id: e.order_id,
    out_trade_no: e.out_trade_no,
    refund_id: e.refund_id,
    statement_id: e.statement_id,
    line_no: e.line_no,
    detail: e.detail,
    evidence: JSON.parse(e.evidence) as unknown,
    created_at: new Date(e.created_at).toISOString(),
    resolved_at: e.resolved_at === null ? null : new Date(e.resolved_at).toISOString(),
    resolved_by: e.resolved_by,
    resolution: e.resolution,
    note: e.note,
  };
}

export const exceptionsList: Command = {
  name: 'exceptions list',
  summary: 'the money exceptions, newest first: where money is at risk, from statements and live payments',
  flags: [
    { name: 'open', type: 'boolean', help: 'only those not resolved' },
    { name: 'kind', type: 'string', value: 'KIND', help: `only one kind (${EXCEPTION_KIND_NAMES.join(', ')})` },
    { name: 'wallet-id', type: 'string', value: 'W', help: 'only this wallet' },
    DATABASE_FLAG,
    JSON_FLAG,
  ],
  examples: ['gateway exceptions list --open', 'gateway exceptions list --kind duplicate_payment --json'],
  async run(v) {
    const kind = typeof v.kind === 'string' ? v.kind : undefined;
    if (kind !== undefined && !(EXCEPTION_KIND_NAMES as string[]).includes(kind))
      throw new AdminError(`--kind must be one of ${EXCEPTION_KIND_NAMES.join(', ')}`);
    const list = await withStore(v, (store) =>
      store.reconciliation.listExceptions({
        ...(v.open === true && { status: 'open' as const }),
        ...(kind !== undefined && { kind: kind as ExceptionKind }),
        ...(typeof v['wallet-id'] === 'string' && { wallet_id: v['wallet-id'] }),
        limit: 1000,
      }),
    );
    if (v.json) console.log(JSON.stringify(list.map(exceptionView), null, 2));
    else if (list.length === 0) console.log(v.open ? 'no open exceptions' : 'no exceptions');
    else
      for (const e of list)
        console.log(
          `${e.exception_id} ${e.exception_status} ${e.severity} ${e.kind} ${e.order_id ?? '-'}: ${e.detail}`,
        );
    return 0;
  },
};

export const exceptionsResolve: Command = {
  name: 'exceptions resolve',
  summary: 'resolves an open exception with a note of what was done (its evidence is kept)',
  flags: [
    { name: 'id', type: 'string', value: 'X', help: 'the exception', required: true },
    { name: 'note', type: 'string', value: 'TEXT', help: 'what was done, and why', required: true },
    DATABASE_FLAG,
    JSON_FLAG,
  ],
  examples: ['gateway exceptions resolve --id X0123456789ab --note "refunded at Alipay by hand, ticket 4411"'],
  async run(v) {
    const done = await withStore(v, async (store) => {
      const e = await resolveWithNote(store, {
        exception_id: required(v, 'id'),
        note: required(v, 'note'),
        by: by(),
        now: Date.now(),
      });
      await auditCli(store, {
        action: 'cli.exceptions.resolve',
        object: e.exception_id,
        after: JSON.stringify({ note: e.note }),
      });
      return e;
    });
    if (v.json) console.log(JSON.stringify(exceptionView(done), null, 2));
    else console.log(`${done.exception_id} resolved: ${done.note}`);
    return 0;
  },
};

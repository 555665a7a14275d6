import { sql, type Kysely } from 'kysely';
import type { OrderResult, Transaction } from '../../domain/transaction.js';
import type {
  ChannelPayment,
  InsertResult,
  ReadConsistency,
  StoreWrite,
  NewChannelPayment,
  Nonce,
  NonceUse,
  PaymentToCheck,
  SettleInput,
} from '../../ports/transactions.js';
import { OUTBOX_COLUMNS, RESULT_COLUMNS } from '../columns.js';
import { postingStatements } from '../ledger/ledger-write.js';
import { prepared, row } from '../prepared.js';
import type { Database } from '../schema.js';
import type { GroupCommitSqlite } from '../sqlite/group-commit.js';
import { SqlTransactions } from './base.js';
import { insertTransaction, markPaymentStatement, type SettleArgs } from './statements.js';

/**
 * SQLite. It has no data-modifying CTEs: a unit of several statements is a Kysely transaction,
 * which the group-commit driver runs as a SAVEPOINT in its open batch (no round trip, no commit
 * of its own). The order insert, the hottest write, runs as one synchronous unit instead
 * (GroupCommitSqlite.writeAtomically).
 */
export class SqliteTransactions extends SqlTransactions {
  private readonly lite;

  constructor(
    db: Kysely<Database>,
    private readonly gc: Pick<GroupCommitSqlite, 'writeAtomically' | 'tryRead'>,
  ) {
    super(db);
    this.lite = {
      /** The order, or nothing when its reference exists: the number of changed rows tells which (RETURNING would cost a temporary table). */
      insertTransaction: prepared((p: Transaction) => insertTransaction(db, p)),
      /** The query results of many (user_id, merchant_reference) pairs, given as one JSON array of pairs. */
      resultsByReferences: prepared((p: { pairs: string }) =>
        db
          .selectFrom('transactions')
          .select(RESULT_COLUMNS)
          .where(
            sql<boolean>`(user_id, merchant_reference) in (select json_extract(value, '$[0]'), json_extract(value, '$[1]') from json_each(${p.pairs}))`,
          ),
      ),
      insertOutbox: prepared((p: Database['outbox']) => db.insertInto('outbox').values(row(p, OUTBOX_COLUMNS))),
    };
  }

  insert(tx: Transaction, nonce: Nonce, payment?: NewChannelPayment): StoreWrite<InsertResult> {
    // Made once the unit is in the open batch (the group commit's `written`): only a failed commit
    // or flush, or a crash, can undo it from then on. Nobody need wait for it: its refusal is handled here.
    let made!: (r: InsertResult) => void;
    let refused!: (e: unknown) => void;
    const committed = new Promise<InsertResult>((resolve, reject) => ((made = resolve), (refused = reject)));
    committed.catch(() => {});
    const durable = this.gc.writeAtomically(
      (run): InsertResult => {
        if (run(this.lite.insertTransaction.bind(tx)).numAffectedRows === 1n) {
          run(this.q.insertNonce.bind(nonce));
          if (payment) run(this.q.insertPayment.bind(payment));
          return { created: true };
        }
        return { created: false, existing: this.conflicting(tx, run(this.q.byReference.bind(tx)).rows[0]) };
      },
      'durable',
      made,
    );
    // A unit that failed before it was made rejects both; one that failed after leaves `committed` as it was.
    durable.catch(refused);
    return { committed, durable };
  }

  useNonce(nonce: string, now: number, host_type: 0 | 1, page_token_hash?: string): Promise<NonceUse> {
    const claim = page_token_hash === undefined ? this.q.claimNonce : this.q.claimNonceForPage;
    return this.db.transaction().execute(async (trx) => {
      const claimed = await claim.first(trx, { nonce, now, host_type, page_token_hash: page_token_hash ?? null });
      if (!claimed) return this.nonceRefusal(trx, nonce, host_type);
      const transaction = await this.q.byId.first(trx, claimed);
      if (!transaction)
        throw new Error(`nonce ${nonce} was claimed for order ${claimed.order_id}, which cannot be read`);
      return { ok: true as const, transaction };
    });
  }

  protected settlePending(input: SettleInput, args: SettleArgs): Promise<Transaction | undefined> {
    // One synchronous unit, as the order insert: every paid order passes here.
    return this.gc.writeAtomically((run) => {
      const settled = run(this.q.settle.bind(args)).rows[0];
      if (!settled) return undefined;
      run(this.lite.insertOutbox.bind(input.outbox(settled)));
      if (input.payment)
        run(markPaymentStatement(this.q, input.payment.out_trade_no, 'paid', input.payment.provider_ref, input.now));
      if (input.entry) {
        // Its lines and balances only if the entry is new.
        const posting = postingStatements(this.db, input.entry);
        if (run(posting.entry).numAffectedRows === 1n) for (const q of posting.then) run(q);
      }
      return settled;
    });
  }

  override findPayment(
    out_trade_no: string,
    consistency: ReadConsistency,
  ): Promise<{ payment: ChannelPayment; order: Transaction | undefined } | undefined> {
    if (consistency === 'durable') return super.findPayment(out_trade_no, consistency);
    // Committed: on the reader, synchronously, without the wait for a flush in flight that a read
    // through Kysely makes (ReadConsistency says when that is enough): under load every other read finds one.
    const payment = this.gc.tryRead<ChannelPayment>(this.q.paymentByOutTradeNo.bind({ out_trade_no }));
    if (!payment) return super.findPayment(out_trade_no, consistency); // no reader (:memory:)
    const found = payment.rows[0];
    if (!found) return Promise.resolve(undefined);
    const order = this.gc.tryRead<Transaction>(this.q.byId.bind({ order_id: found.order_id }));
    return Promise.resolve({ payment: found, order: order?.rows[0] });
  }

  setPaymentPayload(
    payment: Pick<ChannelPayment, 'out_trade_no' | 'order_id'>,
    payload: string,
    now: number,
    orderQr = false,
  ): Promise<boolean> {
    const stored = { out_trade_no: payment.out_trade_no, payload, updated_at: now };
    // Answered once committed, before the flush (TransactionsRepo.setPaymentPayload says why).
    return this.gc.writeAtomically((run) => {
      if (run(this.q.setPaymentPayload.bind(stored)).numAffectedRows !== 1n) return false;
      // Merchant-hosted: the order's qr_code_url in the same unit.
      if (orderQr) run(this.q.setOrderQr.bind({ order_id: payment.order_id, qr_code_url: payload, updated_at: now }));
      return true;
    }, 'committed');
  }

  claimPaymentsToCheck(now: number, lease_ms: number, limit: number): Promise<PaymentToCheck[]> {
    // One writer at a time: the conditional update is the whole claim.
    return this.claimPayments(now, lease_ms, limit, (rows) => sql`in (${rows})`, sql``);
  }

  protected async resultsOf(refs: Array<{ user_id: string; merchant_reference: string }>): Promise<OrderResult[]> {
    const { rows } = await this.lite.resultsByReferences.execute(this.db, {
      pairs: JSON.stringify(refs.map((r) => [r.user_id, r.merchant_reference])),
    });
    return rows;
  }
}

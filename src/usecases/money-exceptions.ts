import { randomBytes } from 'node:crypto';
import { EXCEPTION_KINDS, exceptionKey, type ExceptionKind } from '../domain/reconciliation.js';
import type { MoneyException } from '../ports/reconciliation.js';
import type { Store } from '../ports/store.js';
import { AdminError } from './administration.js';

// The queue of money exceptions: where money is at risk, from a statement's lines and from the
// live path alike (a payment of another amount, a second payment of an order, a payment after the
// order ended, a provider holding a payment for a person). One per kind and subject; resolving one
// keeps its evidence.

export const newExceptionId = () => `X${randomBytes(6).toString('hex')}`;

export interface ExceptionInput {
  kind: ExceptionKind;
  /** The payment (out_trade_no) or refund (refund_id) it is about: with the kind, its key. */
  subject: string;
  source: 'live' | 'statement';
  detail: string;
  evidence: Record<string, unknown>;
  provider?: string | null;
  wallet_id?: string | null;
  order_id?: string | null;
  out_trade_no?: string | null;
  refund_id?: string | null;
  statement_id?: string | null;
  line_no?: number | null;
  now: number;
}

export function exceptionOf(input: ExceptionInput): MoneyException {
  return {
    exception_id: newExceptionId(),
    dedupe_key: exceptionKey(input.kind, input.subject),
    kind: input.kind,
    severity: EXCEPTION_KINDS[input.kind],
    exception_status: 'open',
    source: input.source,
    provider: input.provider ?? null,
    wallet_id: input.wallet_id ?? null,
    order_id: input.order_id ?? null,
    out_trade_no: input.out_trade_no ?? null,
    refund_id: input.refund_id ?? null,
    statement_id: input.statement_id ?? null,
    line_no: input.line_no ?? null,
    detail: input.detail,
    evidence: JSON.stringify(input.evidence),
    created_at: input.now,
    resolved_at: null,
    resolved_by: null,
    resolution: null,
    note: null,
  };
}

/** Records an exception once (a second sighting of the same one finds it). */
export async function raiseException(store: Store, input: ExceptionInput) {
  return store.reconciliation.raiseException(exceptionOf(input));
}

/** Resolves an open exception with a note (required): its evidence stays. */
export async function resolveWithNote(
  store: Store,
  input: { exception_id: string; note: string; by: string; now: number },
): Promise<MoneyException> {
  if (!input.note.trim()) throw new AdminError('a resolution needs a note: what was done, and why');
  const found = await store.reconciliation.findException(input.exception_id);
  if (!found) throw new AdminError(`no exception ${input.exception_id}`);
  const done = await store.reconciliation.resolveException(
    input.exception_id,
    'resolve',
    input.by,
    input.note.trim(),
    input.now,
  );
  if (!done) throw new AdminError(`exception ${input.exception_id} is resolved already`);
  return done;
}

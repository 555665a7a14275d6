// The waiters of one order share its reads: a settle in this process hands them the row (no read),
// a signal without a row (another instance's NOTIFY) costs one read for all of them.
import { afterEach, describe, expect, it } from 'vitest';
import type { Status, Transaction } from '../domain/transaction.js';
import type { OrderReader } from '../ports/signals.js';
import { LocalStatusSignals } from './status-signals.js';

function row(order_id: string, status: Status): Transaction {
  return { order_id, status } as Transaction;
}

/** A store stand-in: answers reads from `rows`, counts them, and can hold them until released. */
class Reader implements OrderReader {
  reads = 0;
  rows = new Map<string, Transaction>();
  private held: (() => void)[] = [];
  holding = false;
  async find(order_id: string): Promise<Transaction | undefined> {
    this.reads++;
    if (this.holding) await new Promise<void>((r) => this.held.push(r));
    return this.rows.get(order_id);
  }
  release(): void {
    this.holding = false;
    for (const r of this.held.splice(0)) r();
  }
}

const tick = () => new Promise((r) => setImmediate(r));

describe('LocalStatusSignals', () => {
  let signals: LocalStatusSignals;
  afterEach(async () => signals?.close());

  it('many waiters of one order: one check read while they subscribe, none when the settle brings the row', async () => {
    signals = new LocalStatusSignals();
    const reader = new Reader();
    reader.rows.set('o1', row('o1', 'pending'));
    reader.holding = true;
    const waits = Array.from({ length: 100 }, () => signals.wait('o1', 60_000, reader));
    expect(signals.waiting).toBe(100);
    // The first subscriber's check is in flight; the 99 others asked for one more, after it.
    expect(reader.reads).toBe(1);
    reader.release();
    await tick();
    await tick();
    expect(reader.reads).toBe(2);
    const paid = row('o1', 'paid');
    signals.publish('o1', paid);
    const got = await Promise.all(waits);
    expect(got.every((t) => t === paid)).toBe(true);
    expect(reader.reads).toBe(2);
    expect(signals.waiting).toBe(0);
  });

  it('a signal without a row: one shared read; still pending, they keep waiting; then final, all answered', async () => {
    signals = new LocalStatusSignals();
    const reader = new Reader();
    reader.rows.set('o2', row('o2', 'pending'));
    const waits = Array.from({ length: 50 }, () => signals.wait('o2', 60_000, reader));
    await tick();
    const afterCheck = reader.reads;
    signals.publish('o2');
    await tick();
    expect(reader.reads).toBe(afterCheck + 1);
    expect(signals.waiting).toBe(50);
    reader.rows.set('o2', row('o2', 'failed'));
    signals.wakeLocal('o2');
    const got = await Promise.all(waits);
    expect(got.map((t) => t?.status)).toEqual(Array(50).fill('failed'));
    expect(reader.reads).toBe(afterCheck + 2);
  });

  it('a change made before the wait began is found by the check read', async () => {
    signals = new LocalStatusSignals();
    const reader = new Reader();
    reader.rows.set('o3', row('o3', 'paid'));
    expect(await signals.wait('o3', 60_000, reader)).toMatchObject({ status: 'paid' });
    expect(signals.waiting).toBe(0);
  });

  it('with a mark taken before the caller read the order: read again only if it was signalled since', async () => {
    signals = new LocalStatusSignals();
    const reader = new Reader();
    for (const id of ['quiet', 'settled', 'other']) reader.rows.set(id, row(id, 'pending'));
    const since = signals.mark();
    // Nothing about this order since the mark: no read.
    const quiet = signals.wait('quiet', 60_000, reader, undefined, since);
    await tick();
    expect(reader.reads).toBe(0);
    // Settled between the caller's read and its wait (its waiters were not subscribed yet): read, and found final.
    reader.rows.set('settled', row('settled', 'paid'));
    signals.publish('settled', reader.rows.get('settled'));
    expect(await signals.wait('settled', 60_000, reader, undefined, since)).toMatchObject({ status: 'paid' });
    expect(reader.reads).toBe(1);
    // Signals may have been missed (a listener reconnect): every later wait with an older mark reads.
    signals.wakeAll();
    const other = signals.wait('other', 60_000, reader, undefined, since);
    await tick();
    expect(reader.reads).toBe(3); // 'quiet' again by wakeAll, 'other' for its old mark
    // A mark older than the signals remembered: read.
    const old = signals.mark();
    for (let i = 0; i < 5000; i++) signals.publish(`elsewhere-${i}`);
    reader.rows.set('late', row('late', 'pending'));
    const late = signals.wait('late', 60_000, reader, undefined, old);
    await tick();
    expect(reader.reads).toBe(4);
    // A fresh mark with nothing since: no read.
    reader.rows.set('fresh', row('fresh', 'pending'));
    const fresh = signals.wait('fresh', 60_000, reader, undefined, signals.mark());
    await tick();
    expect(reader.reads).toBe(4);
    await signals.close();
    expect(await Promise.all([quiet, other, late, fresh])).toEqual([undefined, undefined, undefined, undefined]);
  });

  it('a timeout, an abort and close answer undefined and release the waiter', async () => {
    signals = new LocalStatusSignals();
    const reader = new Reader();
    reader.rows.set('o4', row('o4', 'pending'));
    reader.rows.set('o5', row('o5', 'pending'));
    const abort = new AbortController();
    const timedOut = signals.wait('o4', 1, reader);
    const aborted = signals.wait('o4', 60_000, reader, abort.signal);
    const closed = signals.wait('o5', 60_000, reader);
    expect(signals.waiting).toBe(3);
    expect(await timedOut).toBeUndefined();
    abort.abort();
    expect(await aborted).toBeUndefined();
    expect(signals.waiting).toBe(1);
    await signals.close();
    expect(await closed).toBeUndefined();
    expect(signals.waiting).toBe(0);
    // After close, a wait answers at once.
    expect(await signals.wait('o4', 60_000, reader)).toBeUndefined();
  });

  it('wakeAll reads each order with waiters once', async () => {
    signals = new LocalStatusSignals();
    const reader = new Reader();
    for (const id of ['a', 'b', 'c']) reader.rows.set(id, row(id, 'pending'));
    const waits = ['a', 'a', 'b', 'b', 'c'].map((id) => signals.wait(id, 60_000, reader));
    await tick();
    const before = reader.reads;
    for (const id of ['a', 'b', 'c']) reader.rows.set(id, row(id, 'canceled'));
    signals.wakeAll();
    expect((await Promise.all(waits)).map((t) => t?.status)).toEqual(Array(5).fill('canceled'));
    expect(reader.reads).toBe(before + 3);
  });
});

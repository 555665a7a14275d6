// order_id numbers are drawn from blocks of the `sequences` row; the next block is reserved once
// half of the current one is drawn, so that no create waits for that durable write. On SQLite the
// test holds the WAL's flushes: a draw that needed a reservation then would not be answered.
import { describe, expect, it } from 'vitest';
import { flushHeldGateway, within } from '../support/flushes.js';

describe('order_id blocks reserved ahead, on sqlite', () => {
  const { flushes, gw } = flushHeldGateway();
  const draw = (n: number) => Promise.all(Array.from({ length: n }, () => gw().store.transactions.nextOrderSequence()));

  it('draws past the end of a block without waiting for a write, and the numbers keep rising', async () => {
    // Draw up to a block's boundary first, then half of the next block: its successor is reserved.
    const first = await gw().store.transactions.nextOrderSequence();
    const toBoundary = 100 - (first % 100);
    const before = await draw(toBoundary + 60);
    await new Promise((r) => setTimeout(r, 50));
    flushes.holding = true;
    // The rest of this block and part of the next, while no write can be answered.
    const during = await within(draw(60), 500);
    expect(during).not.toBe('held');
    const all = [first, ...before, ...(during as number[])];
    expect(new Set(all).size).toBe(all.length);
    expect(all).toEqual([...all].sort((a, b) => a - b));
    flushes.release();
  });
});

import { describe, expect, it } from 'vitest';
import { TurnBatch } from './turn-batch.js';

/** A batch over numbers whose values are `v<n>`; records every read it is asked for. */
function numbers(max = 64, fail?: (keys: number[]) => boolean) {
  const calls: Array<{ many: boolean; keys: number[] }> = [];
  const batch = new TurnBatch<number, { n: number; v: string }>(
    async (keys) => {
      calls.push({ many: true, keys });
      if (fail?.(keys)) throw new Error('database gone');
      return keys
        .filter((k) => k % 10 !== 0)
        .reverse()
        .map((n) => ({ n, v: `v${n}` }));
    },
    async (key) => {
      calls.push({ many: false, keys: [key] });
      if (fail?.([key])) throw new Error('database gone');
      return key % 10 !== 0 ? { n: key, v: `v${key}` } : undefined;
    },
    (k) => String(k),
    (v) => String(v.n),
    max,
  );
  return { batch, calls };
}

describe('TurnBatch', () => {
  it('answers the lookups of one turn with one read, each with its own value or undefined', async () => {
    const { batch, calls } = numbers();
    const got = await Promise.all([1, 2, 10, 3, 2].map((k) => batch.load(k)));
    expect(got).toEqual([{ n: 1, v: 'v1' }, { n: 2, v: 'v2' }, undefined, { n: 3, v: 'v3' }, { n: 2, v: 'v2' }]);
    expect(calls).toEqual([{ many: true, keys: [1, 2, 10, 3, 2] }]);
  });

  it('reads a lookup alone with the single read, and later turns with reads of their own', async () => {
    const { batch, calls } = numbers();
    expect(await batch.load(7)).toEqual({ n: 7, v: 'v7' });
    expect(await batch.load(20)).toBeUndefined();
    expect(calls).toEqual([
      { many: false, keys: [7] },
      { many: false, keys: [20] },
    ]);
  });

  it('splits a turn into reads of at most max keys', async () => {
    const { batch, calls } = numbers(4);
    const keys = Array.from({ length: 9 }, (_, i) => i + 1);
    expect((await Promise.all(keys.map((k) => batch.load(k)))).map((v) => v?.n)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(calls.map((c) => c.keys)).toEqual([[1, 2, 3, 4], [5, 6, 7, 8], [9]]);
  });

  it('reads each lookup of a failed read on its own, so only the lookups that fail alone fail', async () => {
    const { batch, calls } = numbers(2, (keys) => keys.includes(3));
    const got = await Promise.allSettled([1, 2, 3, 4].map((k) => batch.load(k)));
    expect(got.map((g) => g.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect((got[2] as PromiseRejectedResult).reason).toEqual(new Error('database gone'));
    expect((got[3] as PromiseFulfilledResult<unknown>).value).toEqual({ n: 4, v: 'v4' });
    expect(calls).toEqual([
      { many: true, keys: [1, 2] },
      { many: true, keys: [3, 4] },
      { many: false, keys: [3] },
      { many: false, keys: [4] },
    ]);
  });
});

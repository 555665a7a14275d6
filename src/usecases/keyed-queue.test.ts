import { describe, expect, it } from 'vitest';
import { KeyedQueue } from './keyed-queue.js';

const tick = () => new Promise((r) => setTimeout(r, 1));

describe('KeyedQueue', () => {
  it('runs work sharing a key one at a time, in order; other keys meanwhile; keys in any order never deadlock', async () => {
    const q = new KeyedQueue();
    const log: string[] = [];
    const job = (name: string) => async () => {
      log.push(`${name}+`);
      await tick();
      log.push(`${name}-`);
      return name;
    };
    const results = await Promise.all([
      q.run(['a', 'b'], job('1')),
      q.run(['b', 'a'], job('2')),
      q.run(['c'], job('3')),
      q.run(['a'], job('4')),
    ]);
    expect(results).toEqual(['1', '2', '3', '4']);
    // 1 and 2 share keys: 2 starts after 1 ends; 4 after 2; 3 runs beside 1.
    expect(log.indexOf('2+')).toBeGreaterThan(log.indexOf('1-'));
    expect(log.indexOf('4+')).toBeGreaterThan(log.indexOf('2-'));
    expect(log.indexOf('3+')).toBeLessThan(log.indexOf('1-'));
    expect(q.size).toBe(0);
  });

  it('a failing run frees its keys for the next', async () => {
    const q = new KeyedQueue();
    await expect(q.run(['a'], async () => Promise.reject(new Error('no')))).rejects.toThrow('no');
    expect(await q.run(['a'], async () => 'next')).toBe('next');
    expect(q.size).toBe(0);
  });
});

import { describe, expect, it } from 'vitest';
import { orderNonce, randomHex } from './random-pool.js';

describe('randomHex', () => {
  it('gives 32 hex characters for 16 bytes, all distinct across several pool refills', () => {
    // 4096-byte pools: 2,000 nonces of 16 bytes use about eight of them.
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const hex = randomHex(16);
      expect(hex).toMatch(/^[0-9a-f]{32}$/);
      seen.add(hex);
    }
    expect(seen.size).toBe(2000);
  });

  it('sizes that do not divide the pool, and sizes beyond it', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      const hex = randomHex(24);
      expect(hex).toHaveLength(48);
      seen.add(hex);
    }
    expect(seen.size).toBe(1000);
    expect(randomHex(5000)).toMatch(/^[0-9a-f]{10000}$/);
  });
});

describe('orderNonce', () => {
  it('32 hex characters: the creation millisecond, then 21 random ones; later milliseconds sort later', () => {
    const t = Date.UTC(2026, 10, 22, 10, 0, 0, 999);
    const a = orderNonce(t);
    const b = orderNonce(t);
    expect(a).toMatch(/^[0-9a-f]{32}$/);
    expect(parseInt(a.slice(0, 11), 16)).toBe(t);
    expect(b.slice(0, 11)).toBe(a.slice(0, 11));
    expect(b.slice(11)).not.toBe(a.slice(11));
    expect(orderNonce(t + 1) > a.slice(0, 11) + 'f'.repeat(21)).toBe(true);
    expect(orderNonce(t - 1) < a.slice(0, 11) + '0'.repeat(21)).toBe(true);
  });

  it('the random part uses all 16 hex digits in every position', () => {
    const seen = Array.from({ length: 21 }, () => new Set<string>());
    for (let i = 0; i < 2000; i++) {
      const tail = orderNonce(0).slice(11);
      for (let j = 0; j < 21; j++) seen[j].add(tail[j]);
    }
    expect(seen.map((s) => s.size)).toEqual(Array(21).fill(16));
  });
});

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
  it('32 hex characters: the creation second, then 24 random ones; later seconds sort later', () => {
    const t = Date.UTC(2026, 10, 22, 10, 0, 0, 999);
    const a = orderNonce(t);
    const b = orderNonce(t);
    expect(a).toMatch(/^[0-9a-f]{32}$/);
    expect(a.slice(0, 8)).toBe((t / 1000 - 0.999).toString(16));
    expect(b.slice(0, 8)).toBe(a.slice(0, 8));
    expect(b.slice(8)).not.toBe(a.slice(8));
    expect(orderNonce(t + 1) > a.slice(0, 8) + 'f'.repeat(24)).toBe(true);
    expect(orderNonce(t + 1000).slice(0, 8) > a.slice(0, 8)).toBe(true);
  });
});

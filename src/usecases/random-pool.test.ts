import { describe, expect, it } from 'vitest';
import { randomHex } from './random-pool.js';

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

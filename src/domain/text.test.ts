import { describe, expect, it } from 'vitest';
import { textOf } from './text.js';

describe('textOf', () => {
  it('keeps text and numbers, and gives nothing for what is neither', () => {
    expect(textOf('40004')).toBe('40004');
    expect(textOf(10000)).toBe('10000');
    expect(textOf(false)).toBe('');
    expect(textOf(undefined)).toBe('');
    expect(textOf(null)).toBe('');
    expect(textOf({ code: 1 })).toBe('');
    expect(textOf(['a'])).toBe('');
  });
});

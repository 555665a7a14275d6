import { describe, expect, it } from 'vitest';
import {
  MAX_INTEGER_DIGITS,
  convertAmount,
  exponentOf,
  formatAmount,
  formatAmountAsJsonNumber,
  formatRate,
  isSupportedCurrency,
  parseAmount,
  parseRate,
} from './money.js';

describe('parseAmount', () => {
  it.each([
    ['120.00', 2, 12000],
    ['120.0', 2, 12000],
    ['120', 2, 12000],
    ['120.5', 2, 12050],
    ['0.01', 2, 1],
    ['0', 2, 0],
    ['0.00', 2, 0],
    ['999999999999.99', 2, 99999999999999],
    ['15', 0, 15],
  ])('%s with %i decimals is %i minor units', (text, exponent, minor) => {
    expect(parseAmount(text, exponent)).toEqual({ ok: true, minor });
  });

  it.each([
    '-1',
    '+1',
    '1e2',
    '1E2',
    '01.00',
    '00',
    '1.234',
    ' 1',
    '1 ',
    '',
    '.5',
    '1.',
    '1,00',
    '0x10',
    'NaN',
    'Infinity',
    '１',
    '1'.repeat(MAX_INTEGER_DIGITS + 1),
    '1'.repeat(400),
  ])('refuses %j', (text) => {
    const r = parseAmount(text, 2);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toMatch(/\S/);
  });

  it('refuses decimals for a currency without minor units, and says why', () => {
    expect(parseAmount('1.5', 0)).toEqual({ ok: false, reason: 'must be a whole number for this currency' });
    expect(parseAmount('1.234', 2)).toEqual({ ok: false, reason: 'must have at most 2 decimal places' });
    expect(parseAmount('120.0001', 2)).toEqual({ ok: false, reason: 'must have at most 2 decimal places' });
    expect(parseAmount('120.0000000001', 2)).toEqual({ ok: false, reason: 'must have at most 2 decimal places' });
    expect(parseAmount('5.10', 0)).toEqual({ ok: false, reason: 'must be a whole number for this currency' });
    expect(parseAmount('1'.repeat(13), 2)).toEqual({ ok: false, reason: 'is too large' });
  });

  it("accepts zeros past the currency's decimals, which round nothing (Magento sends 120.0000)", () => {
    expect(parseAmount('120.0000', 2)).toEqual({ ok: true, minor: 12000 });
    expect(parseAmount('120.5000', 2)).toEqual({ ok: true, minor: 12050 });
    expect(parseAmount('0.010', 2)).toEqual({ ok: true, minor: 1 });
    expect(parseAmount('0.000', 2)).toEqual({ ok: true, minor: 0 });
    expect(parseAmount('500.00', 0)).toEqual({ ok: true, minor: 500 });
  });

  it('keeps the largest amount a safe integer', () => {
    const r = parseAmount(`${'9'.repeat(MAX_INTEGER_DIGITS)}.99`, 2);
    expect(r.ok && Number.isSafeInteger(r.minor)).toBe(true);
  });
});

describe('formatAmount', () => {
  it.each([
    [12000, 2, '120.00'],
    [1, 2, '0.01'],
    [10, 2, '0.10'],
    [0, 2, '0.00'],
    [12050, 2, '120.50'],
    [15, 0, '15'],
    [99999999999999, 2, '999999999999.99'],
  ])('%i with %i decimals is %s', (minor, exponent, text) => {
    expect(formatAmount(minor, exponent)).toBe(text);
  });

  it('refuses negative, fractional and unsafe minor amounts', () => {
    expect(() => formatAmount(-1, 2)).toThrow();
    expect(() => formatAmount(1.5, 2)).toThrow();
    expect(() => formatAmount(2 ** 53, 2)).toThrow();
  });

  it('round-trips every amount it formats', () => {
    for (const minor of [0, 1, 9, 10, 99, 100, 101, 12000, 12345, 100000, 99999999999999]) {
      expect(parseAmount(formatAmount(minor, 2), 2)).toEqual({ ok: true, minor });
    }
    for (const text of ['0.01', '0.10', '1.00', '120.00', '120.50', '999999999999.99']) {
      const r = parseAmount(text, 2);
      expect(r.ok && formatAmount(r.minor, 2)).toBe(text);
    }
  });
});

describe('formatAmountAsJsonNumber', () => {
  it.each([
    [12000, '120'],
    [1, '0.01'],
    [12050, '120.5'],
    [12055, '120.55'],
    [10, '0.1'],
    [100, '1'],
    [0, '0'],
    [1000, '10'],
  ])('%i minor units is %s', (minor, text) => {
    expect(formatAmountAsJsonNumber(minor, 2)).toBe(text);
  });

  it('is the text JSON.stringify gives the parsed number', () => {
    for (const minor of [1, 10, 99, 100, 12000, 12050, 12055, 123456789]) {
      const text = formatAmountAsJsonNumber(minor, 2);
      expect(JSON.stringify(JSON.parse(text))).toBe(text);
      expect(String(Number(formatAmount(minor, 2)))).toBe(text);
    }
  });

  it('leaves whole amounts of a currency without decimals alone', () => {
    expect(formatAmountAsJsonNumber(100, 0)).toBe('100');
    expect(formatAmountAsJsonNumber(120, 0)).toBe('120');
  });
});

describe('rates', () => {
  it.each([
    ['4.6443', 4_644_300],
    ['1', 1_000_000],
    ['0.000001', 1],
    ['5.000000', 5_000_000],
    ['999999.999999', 999_999_999_999],
  ])('parses %s as %i millionths', (text, micros) => {
    expect(parseRate(text)).toBe(micros);
  });

  it.each(['0', '0.0', '0.0000001', '-1', '1e3', '', ' 1', '1.', '.5', '01', '1000000', 'abc'])(
    'refuses %j',
    (text) => {
      expect(parseRate(text)).toBeNull();
    },
  );

  it('formats with six decimals, or the query response five', () => {
    expect(formatRate(4_644_300)).toBe('4.644300');
    expect(formatRate(4_644_300, 5)).toBe('4.64430');
    expect(formatRate(1_000_000, 5)).toBe('1.00000');
    expect(formatRate(1, 6)).toBe('0.000001');
    expect(formatRate(5_000_000, 0)).toBe('5');
    // Fewer decimals round half up rather than cut.
    expect(formatRate(4_644_305, 5)).toBe('4.64431');
    expect(formatRate(4_644_304, 5)).toBe('4.64430');
    expect(formatRate(1, 5)).toBe('0.00000');
  });

  it('formats every rate exactly as integer arithmetic does, the largest ones included', () => {
    const reference = (micros: number, decimals: number) => {
      const scale = 1_000_000n;
      const t = ((BigInt(micros) * 10n ** BigInt(decimals) * 2n + scale) / (2n * scale))
        .toString()
        .padStart(decimals + 1, '0');
      return decimals === 0 ? t : `${t.slice(0, -decimals)}.${t.slice(-decimals)}`;
    };
    const samples = [
      1, 5, 499_999, 500_000, 999_999_999_999, 999_999_999_995, 123_456_789_012, 4_503_599_627, 4_503_599_627_370,
    ];
    let x = 12345;
    for (let i = 0; i < 2000; i++) {
      x = (x * 1103515245 + 12345) % 2 ** 31;
      samples.push(1 + ((x * 7919) % 999_999_999_999));
    }
    for (const micros of samples)
      for (let d = 0; d <= 6; d++) expect(formatRate(micros, d), `${micros} at ${d}`).toBe(reference(micros, d));
  });
});

describe('convertAmount', () => {
  it('converts at a rate, rounding half up to the fen', () => {
    // 120.00 NZD at 4.6443 = 557.316 CNY
    expect(convertAmount(12000, 2, 4_644_300, 2)).toBe(55732);
    // 0.01 at 5 = 0.05 (the production notification's amount_cny)
    expect(convertAmount(1, 2, 5_000_000, 2)).toBe(5);
    // 0.01 at 0.5 = 0.005, exactly half: up
    expect(convertAmount(1, 2, 500_000, 2)).toBe(1);
    // 0.01 at 0.499999 = 0.00499999: down
    expect(convertAmount(1, 2, 499_999, 2)).toBe(0);
    // 1.00 at 1.234565 = 1.234565: 1.23
    expect(convertAmount(100, 2, 1_234_565, 2)).toBe(123);
    // 1.00 at 1.235 = 1.235: half up to 1.24
    expect(convertAmount(100, 2, 1_235_000, 2)).toBe(124);
  });

  it('is exact at rate 1 and across exponents', () => {
    expect(convertAmount(12345, 2, 1_000_000, 2)).toBe(12345);
    expect(convertAmount(150, 0, 1_000_000, 2)).toBe(15000);
    expect(convertAmount(155, 2, 1_000_000, 0)).toBe(2);
  });

  it('stays exact for the largest amounts', () => {
    // 999999999999.99 * 4.6443 = 4644299999999.953557
    expect(convertAmount(99999999999999, 2, 4_644_300, 2)).toBe(464429999999995);
  });
});

describe('currencies', () => {
  it('knows the wallet currencies in use and their decimals', () => {
    for (const c of ['NZD', 'AUD', 'CNY']) {
      expect(isSupportedCurrency(c)).toBe(true);
      expect(exponentOf(c)).toBe(2);
    }
    expect(isSupportedCurrency('XXX')).toBe(false);
    expect(isSupportedCurrency('toString')).toBe(false);
    expect(() => exponentOf('XXX')).toThrow();
  });
});

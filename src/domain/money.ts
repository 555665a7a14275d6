// Money is an integer count of minor units plus a currency. Decimal strings exist only at the wire.

/** Minor-unit exponent per currency. Every currency the gateway serves is listed: an unknown code is a data error. */
export const CURRENCY_EXPONENT: Readonly<Record<string, number>> = Object.freeze({
  NZD: 2,
  AUD: 2,
  CNY: 2,
  USD: 2,
  EUR: 2,
  GBP: 2,
  HKD: 2,
  SGD: 2,
  CAD: 2,
  JPY: 0,
});

export function isSupportedCurrency(code: string): boolean {
  return Object.prototype.hasOwnProperty.call(CURRENCY_EXPONENT, code);
}

export function exponentOf(currency: string): number {
  const e = CURRENCY_EXPONENT[currency];
  if (e === undefined) throw new Error(`unsupported currency ${currency}`);
  return e;
}

/** The largest amount we accept: 12 integer digits keeps every minor-unit sum inside Number.MAX_SAFE_INTEGER. */
export const MAX_INTEGER_DIGITS = 12;

export type AmountParse = { ok: true; minor: number } | { ok: false; reason: string };

/**
 * Parses a decimal amount as written by a client ("120", "120.5", "120.00") into minor units.
 * Refuses signs, exponents, leading zeros, spaces and more decimals than the currency has,
 * rather than rounding: a payment amount that needs rounding is a client bug. Zeros past the
 * currency's decimals round nothing and are accepted: Magento sends its totals as `120.0000`.
 */
export function parseAmount(text: string, exponent: number): AmountParse {
  const m = /^(0|[1-9][0-9]*)(?:\.([0-9]+))?$/.exec(text);
  if (!m) return { ok: false, reason: 'must be a plain decimal such as 120.00' };
  const whole = m[1];
  const frac = m[2] ?? '';
  if (whole.length > MAX_INTEGER_DIGITS) return { ok: false, reason: 'is too large' };
  if (frac.length > exponent && /[1-9]/.test(frac.slice(exponent))) {
    return {
      ok: false,
      reason:
        exponent === 0 ? 'must be a whole number for this currency' : `must have at most ${exponent} decimal places`,
    };
  }
  const minorDigits = frac.slice(0, exponent);
  const minor = Number(whole) * 10 ** exponent + (minorDigits === '' ? 0 : Number(minorDigits.padEnd(exponent, '0')));
  return { ok: true, minor };
}

/** Formats minor units with exactly the currency's decimals: 12000 -> "120.00". */
export function formatAmount(minor: number, exponent: number): string {
  if (!Number.isSafeInteger(minor) || minor < 0) throw new Error(`invalid minor amount ${minor}`);
  if (exponent === 0) return String(minor);
  const s = String(minor).padStart(exponent + 1, '0');
  return `${s.slice(0, -exponent)}.${s.slice(-exponent)}`;
}

/** As formatAmount, with a minus sign below zero (a balance, a movement out): -1250 -> "-12.50". */
export function formatSignedAmount(minor: number, exponent: number): string {
  return minor < 0 ? `-${formatAmount(-minor, exponent)}` : formatAmount(minor, exponent);
}

/**
 * The shortest decimal text for an amount, as a JSON number is printed by JSON.stringify,
 * PHP's json_decode + string cast, and Python's float/int str: "120", "120.5", "0.01".
 * The query response carries `amount` as a JSON number and signs exactly this text, so a client
 * that rebuilds the message from the parsed number gets the same string.
 */
export function formatAmountAsJsonNumber(minor: number, exponent: number): string {
  const fixed = formatAmount(minor, exponent);
  if (!fixed.includes('.')) return fixed;
  return fixed.replace(/0+$/, '').replace(/\.$/, '');
}

/** Exchange rates are stored as integer millionths: "4.6443" -> 4644300. */
export const RATE_SCALE = 1_000_000;

export function parseRate(text: string): number | null {
  const m = /^(0|[1-9][0-9]{0,5})(?:\.([0-9]{1,6}))?$/.exec(text);
  if (!m) return null;
  const micros = Number(m[1]) * RATE_SCALE + Number((m[2] ?? '').padEnd(6, '0'));
  return micros > 0 ? micros : null;
}

/** Formats a rate with the given decimals, rounding half up when fewer than six are asked for. */
export function formatRate(micros: number, decimals = 6): string {
  const text = roundedRate(micros, decimals).padStart(decimals + 1, '0');
  return decimals === 0 ? text : `${text.slice(0, -decimals)}.${text.slice(-decimals)}`;
}

/** micros / RATE_SCALE at `decimals` places, rounded half up, as the digits of an integer. */
function roundedRate(micros: number, decimals: number): string {
  const numerator = micros * 10 ** decimals * 2 + RATE_SCALE;
  // Exact in floating point while every value stays an integer below 2^53 (every usual rate).
  const d = 2 * RATE_SCALE;
  if (Number.isSafeInteger(micros) && micros >= 0 && Number.isSafeInteger(numerator))
    return String((numerator - (numerator % d)) / d);
  const scale = BigInt(RATE_SCALE);
  return ((BigInt(micros) * 10n ** BigInt(decimals) * 2n + scale) / (2n * scale)).toString();
}

/**
 * Converts an amount into another currency at a rate in millionths, rounding half up
 * to the target currency's minor unit. Integer arithmetic throughout.
 */
export function convertAmount(minor: number, fromExponent: number, rateMicros: number, toExponent: number): number {
  const num = BigInt(minor) * BigInt(rateMicros) * 10n ** BigInt(toExponent);
  const den = BigInt(RATE_SCALE) * 10n ** BigInt(fromExponent);
  return Number((num * 2n + den) / (2n * den));
}

/**
 * `of`'s share of `part` out of `whole`, rounded half up, without a float; all of `of` once `part`
 * reaches `whole`. Parts taken in turn (the share of the running total less the share before) add
 * up to `of` exactly.
 */
export function proRata(part: number, whole: number, of: number): number {
  if (part >= whole) return of;
  return Number((BigInt(part) * BigInt(of) * 2n + BigInt(whole)) / (BigInt(whole) * 2n));
}

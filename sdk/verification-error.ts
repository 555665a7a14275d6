// The one error the verify-or-throw functions raise. `code` is stable (switch on it, count it in
// metrics); `message` is for a person and says what to fix.

export type VerificationErrorCode =
  /** A Standard Webhooks header is absent or empty; `header` names it. */
  | 'missing_header'
  /** A header is present but unusable (repeated, or a timestamp that is not Unix seconds). */
  | 'invalid_header'
  /** The signature matches but webhook-timestamp is too far from now; see `ageSeconds`. */
  | 'timestamp_outside_tolerance'
  /** The body given is not the bytes received: a parsed object, or text re-encoded from one. */
  | 'body_not_raw'
  /** webhook-signature has entries, none of them `v1,...`. */
  | 'no_v1_signature'
  /** The notification or redirection is not a form (string, bytes, URLSearchParams, object). */
  | 'invalid_body'
  /** A field the signature covers is absent; `field` names it. */
  | 'missing_field'
  /** A signed field is repeated, not a string, or the signature is not 64 hex digits. */
  | 'invalid_field'
  /** Well-formed, but no signature matches: wrong key, or the signed content was changed. */
  | 'no_matching_signature';

export class VerificationError extends Error {
  override readonly name = 'VerificationError';
  readonly code: VerificationErrorCode;
  /** The header at fault, lower case (`webhook-id`, `webhook-timestamp`, `webhook-signature`). */
  readonly header: string | undefined;
  /** The form field at fault. */
  readonly field: string | undefined;
  /** timestamp_outside_tolerance: now minus webhook-timestamp (negative: in the future). */
  readonly ageSeconds: number | undefined;

  constructor(
    code: VerificationErrorCode,
    message: string,
    details: { header?: string; field?: string; ageSeconds?: number } = {},
  ) {
    super(message);
    this.code = code;
    this.header = details.header;
    this.field = details.field;
    this.ageSeconds = details.ageSeconds;
  }
}

/**
 * How the boolean verifiers are built on the throwing ones: a VerificationError is `false`;
 * anything else is a bug in the SDK and is not hidden.
 */
export function passes(verify: () => unknown): boolean {
  try {
    verify();
    return true;
  } catch (err) {
    if (err instanceof VerificationError) return false;
    throw err;
  }
}

/** What a value is, for messages: "null", "an array", "an object", "a number". */
export function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return /^[aeiou]/.test(typeof value) ? `an ${typeof value}` : `a ${typeof value}`;
}

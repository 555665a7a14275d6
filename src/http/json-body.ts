// Request bodies are parsed so that a number keeps the exact text the client wrote:
// `"amount": 120.00` must be sign-checked as `120.00`, which JSON.parse would turn into 120.
// Top-level numbers become their source text; the names of those fields are remembered so the
// route can refuse numbers where only strings are allowed. Top-level nulls mean "not sent"
// (the signing rules leave null values out).

export interface ParsedBody {
  fields: Record<string, unknown>;
  numberFields: Set<string>;
}

const NUM_MARK = '\u0000#';

export class BodyError extends Error {}

/** Returns the parsed object, or throws BodyError when the text is not one JSON object. */
export function parseJsonBody(text: string): ParsedBody {
  // A UTF-8 byte order mark (.NET's StreamWriter with Encoding.UTF8 writes one) is not part of the JSON.
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.includes('\u0000')) throw new BodyError('the body contains a NUL character');
  let marked: unknown;
  try {
    marked = JSON.parse(text);
  } catch {
    throw new BodyError('the body is not valid JSON');
  }
  // The usual body has strings only: parsed as it is, nothing to mark. With a number (or a NUL
  // escape, which the marking pass refuses) anywhere, it is parsed again with numbers marked.
  if (!plainStrings(marked)) marked = JSON.parse(quoteNumbers(text));
  if (marked === null || typeof marked !== 'object' || Array.isArray(marked)) {
    throw new BodyError('the body must be a JSON object');
  }
  const fields: Record<string, unknown> = {};
  const numberFields = new Set<string>();
  for (const [name, value] of Object.entries(marked as Record<string, unknown>)) {
    // Assigning it would replace the object's prototype and make fields appear that nobody signed.
    if (name === '__proto__') throw new BodyError('the body must not have a __proto__ field');
    if (value === null) continue;
    if (typeof value === 'string' && value.startsWith(NUM_MARK)) {
      fields[name] = value.slice(NUM_MARK.length);
      numberFields.add(name);
    } else {
      fields[name] = unmark(value);
    }
  }
  return { fields, numberFields };
}

/** No API field is nested; deeper values are refused rather than walked (a 64 KB body can nest 32,000 deep). */
const MAX_DEPTH = 32;

function tooDeep(depth: number): void {
  if (depth > MAX_DEPTH) throw new BodyError(`the body is nested more than ${MAX_DEPTH} levels deep`);
}

/** True when the value holds no number and no NUL in a string or a field name, at any depth. */
function plainStrings(v: unknown, depth = 0): boolean {
  if (typeof v === 'string') return !v.includes('\u0000');
  if (typeof v === 'number') return false;
  if (v && typeof v === 'object') {
    tooDeep(depth);
    const o = v as Record<string, unknown>;
    for (const k in o) if (k.includes('\u0000') || !plainStrings(o[k], depth + 1)) return false;
  }
  return true;
}

/** Nested numbers are not signed fields; give them back as plain numbers. */
function unmark(v: unknown, depth = 0): unknown {
  if (typeof v === 'string') return v.startsWith(NUM_MARK) ? Number(v.slice(NUM_MARK.length)) : v;
  if (Array.isArray(v)) {
    tooDeep(depth);
    return v.map((x) => unmark(x, depth + 1));
  }
  if (v && typeof v === 'object') {
    tooDeep(depth);
    return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, unmark(x, depth + 1)]));
  }
  return v;
}

/** Wraps every number token outside string literals in quotes with a marker prefix. */
function quoteNumbers(text: string): string {
  let out = '';
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i];
    if (c === '"') {
      const start = i++;
      while (i < n && text[i] !== '"') {
        // An escaped NUL could forge the number marker; NUL is never valid in a value or a name anyway.
        if (text[i] === '\\' && text.startsWith('u0000', i + 1))
          throw new BodyError('the body contains a NUL character');
        i += text[i] === '\\' ? 2 : 1;
      }
      i++;
      out += text.slice(start, i);
    } else if (c === '-' || (c >= '0' && c <= '9')) {
      const start = i;
      while (i < n && /[-+0-9.eE]/.test(text[i])) i++;
      const token = text.slice(start, i);
      // Let JSON.parse judge malformed numbers: only well-formed tokens are rewritten.
      out += /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?$/.test(token)
        ? `"${NUM_MARK.replace('\u0000', '\\u0000')}${token}"`
        : token;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

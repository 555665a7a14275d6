// A field of a parsed answer (a provider's JSON, a stored payload) as text: its value when it is
// text or a number, and nothing otherwise. Never "[object Object]" in a message or a record.

export function textOf(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return String(v);
  return '';
}

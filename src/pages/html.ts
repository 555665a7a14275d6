// Server-rendered HTML with every interpolated value escaped.

export function escapeHtml(v: unknown): string {
  return String(v ?? '')
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

/** Tagged template: `${value}` is escaped unless it is a `raw(...)` fragment. */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Raw {
  let out = strings[0] ?? '';
  values.forEach((v, i) => {
    out += (Array.isArray(v) ? v.map(part).join('') : part(v)) + (strings[i + 1] ?? '');
  });
  return new Raw(out);
}

function part(v: unknown): string {
  return v instanceof Raw ? v.text : escapeHtml(v);
}

export class Raw {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

export function raw(text: string): Raw {
  return new Raw(text);
}

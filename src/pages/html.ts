// Server-rendered HTML with every interpolated value escaped.

/** What a template may interpolate: text, a number, nothing, a fragment, or a list of them. */
export type Interpolation = string | number | null | undefined | Raw | readonly Interpolation[];

export function escapeHtml(v: string | number | null | undefined): string {
  return String(v ?? '')
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;')
    .replaceAll("'", '&#39;');
}

/** Tagged template: `${value}` is escaped unless it is a `raw(...)` fragment. */
export function html(strings: TemplateStringsArray, ...values: Interpolation[]): Raw {
  let out = strings[0] ?? '';
  values.forEach((v, i) => {
    out += (Array.isArray(v) ? v.map(part).join('') : part(v)) + (strings[i + 1] ?? '');
  });
  return new Raw(out);
}

function part(v: Interpolation): string {
  if (Array.isArray(v)) return v.map(part).join('');
  return v instanceof Raw ? v.text : escapeHtml(v as string | number | null | undefined);
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

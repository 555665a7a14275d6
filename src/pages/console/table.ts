import { html, raw, type Interpolation, type Raw } from '../html.js';

// A list as a table on a wide screen and as stacked cards on a phone: every cell carries its
// column's label (data-label), which console.css shows before the value when the table is cards.

export interface Column {
  label: string;
  /** A figure: right-aligned, tabular digits. */
  num?: boolean;
  /** A long value (JSON, a URL, an email address) that wraps instead of widening the table. */
  wrap?: boolean;
  /** A share of the width of a table laid out fixed (the audit log), in percent: a class of console.css (the CSP allows no inline style). */
  width?: 10 | 15 | 20 | 30;
}

export interface TableOptions {
  id?: string;
  caption?: Raw;
  /** Columns sized by `width`, not by their longest value. */
  fixed?: boolean;
}

export function dataTable(
  columns: readonly Column[],
  rows: ReadonlyArray<readonly Interpolation[]>,
  o: TableOptions = {},
): Raw {
  const cls = (c: Column) => [c.num && 'num', c.wrap && 'wrap'].filter(Boolean).join(' ');
  const classAttr = (c: Column) => (c.num || c.wrap ? raw(` class="${cls(c)}"`) : '');
  const cols = o.fixed
    ? html`<colgroup>${columns.map((c) => html`<col${c.width ? raw(` class="w${c.width}"`) : ''}>`)}</colgroup>`
    : '';
  return html`<div class="table-wrap"><table class="cards${o.fixed ? ' fixed' : ''}"${o.id ? html` id="${o.id}"` : ''}>${o.caption ? html`<caption class="muted">${o.caption}</caption>` : ''}${cols}
    <thead><tr>${columns.map((c) => html`<th scope="col"${classAttr(c)}>${c.label}</th>`)}</tr></thead>
    <tbody>${rows.map(
      (r) =>
        html`<tr>${r.map((v, i) => {
          const c = columns[i] ?? { label: '' };
          return html`<td${c.label ? html` data-label="${c.label}"` : ''}${classAttr(c)}>${v}</td>`;
        })}</tr>`,
    )}</tbody></table></div>`;
}

const TABLE = /<table\b([^>]*)>([\s\S]*?)<\/table>/g;
const HEAD_CELL = /<th\b[^>]*>([\s\S]*?)<\/th>/g;
const ROW = /<tr\b([^>]*)>([\s\S]*?)<\/tr>/g;

/**
 * The tables of a page not made by dataTable, made cards too: each body cell gets its column's
 * label (its header's text). The page's HTML is the console's own: values in it are escaped, so a
 * `<td` or `<th` is always a tag, and tables are never nested.
 */
export function labelTables(page: string): string {
  return page.replace(TABLE, (whole, attrs: string, inner: string) => {
    if (/\bclass="cards\b/.test(attrs)) return whole;
    const head = /<thead\b[^>]*>([\s\S]*?)<\/thead>/.exec(inner);
    if (!head) return whole;
    const labels = [...head[1].matchAll(HEAD_CELL)].map((m) => m[1].replace(/<[^>]+>/g, '').trim());
    const body = inner.slice(head.index + head[0].length).replace(ROW, (_row, rowAttrs: string, cells: string) => {
      let i = 0;
      const labelled = cells.replace(/<td\b/g, () => {
        const label = labels[i++] ?? '';
        return label ? `<td data-label="${label.replace(/"/g, '&quot;')}"` : '<td';
      });
      return `<tr${rowAttrs}>${labelled}</tr>`;
    });
    const classed = /\bclass="/.test(attrs) ? attrs.replace(/\bclass="/, 'class="cards ') : `${attrs} class="cards"`;
    return `<table${classed}>${inner.slice(0, head.index + head[0].length)}${body}</table>`;
  });
}

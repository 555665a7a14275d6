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

import { html, raw, type Raw } from '../html.js';
import type { PageContext } from './layout.js';

// The parts of the lists' filter forms they share: an option that is chosen when it is the
// current value, an operator's choice of one organisation, and a link that carries a filter.

/** The query string of the fields that have a value (a filter, a page's cursor). */
export function queryOf(fields: Readonly<Record<string, string | undefined>>): string {
  const p = new URLSearchParams();
  for (const [k, val] of Object.entries(fields)) if (val) p.set(k, val);
  return p.toString();
}

/** `path`, with the query of the fields that have a value, if any. */
export function withQuery(path: string, fields: Readonly<Record<string, string | undefined>>): string {
  const q = queryOf(fields);
  return q ? `${path}?${q}` : path;
}

export function option(value: string, label: string, current: string | undefined): Raw {
  return html`<option value="${value}"${current === value ? raw(' selected') : ''}>${label}</option>`;
}

/** The organisation field of a filter (operators): any (or `anyLabel`), or one by name and id. */
export function organisationSelect(
  pc: PageContext,
  organisations: ReadonlyArray<{ organisation_id: number; organisation_name: string }>,
  current: string | undefined,
  anyLabel = pc.t('tx.any'),
): Raw {
  return html`<div><label for="organisation_id">${pc.t('tx.organisation')}</label><select id="organisation_id" name="organisation_id">${option('', anyLabel, current)}${organisations.map((o) => option(String(o.organisation_id), `${o.organisation_name} (${o.organisation_id})`, current))}</select></div>`;
}

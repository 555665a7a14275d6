// What the console's lists read alike from their query: a range of days (UTC, `to` included) and,
// for operators, one organisation. A value that is no value of its field is a problem, said on the
// page (400), never ignored.

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DAY_MS = 86_400_000;

/** 00:00 UTC of a `YYYY-MM-DD` day, or undefined for anything else (2026-02-30 too). */
export function dayStart(v: string): number | undefined {
  const m = DAY.exec(v);
  if (!m) return undefined;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== v ? undefined : ms;
}

export interface CommonFilter {
  /** A query field as trimmed text ('' when absent). */
  s: (k: string) => string;
  filter: { from?: string; to?: string; organisation_id?: string };
  search: { from?: number; to?: number; organisation_id?: number };
  problems: string[];
}

export function commonFilter(q: Record<string, unknown>): CommonFilter {
  const s = (k: string) => (typeof q[k] === 'string' ? q[k].trim() : '');
  const filter: CommonFilter['filter'] = {};
  const search: CommonFilter['search'] = {};
  const problems: string[] = [];
  for (const k of ['from', 'to'] as const) {
    const v = s(k);
    if (!v) continue;
    filter[k] = v;
    const ms = dayStart(v);
    if (ms === undefined) problems.push(`${k} ${v}`);
    else search[k] = k === 'to' ? ms + DAY_MS : ms;
  }
  // A range that ends before it begins holds nothing: said so, not shown as an empty list.
  if (search.from !== undefined && search.to !== undefined && search.to <= search.from)
    problems.push(`from ${filter.from} is after to ${filter.to}`);
  const organisation = s('organisation_id');
  if (organisation) {
    filter.organisation_id = organisation;
    // Held to a merchant's own organisation whatever is asked (the use cases); an operator's choice.
    if (/^\d{1,15}$/.test(organisation)) search.organisation_id = Number(organisation);
    else problems.push(`organisation_id ${organisation}`);
  }
  return { s, filter, search, problems };
}

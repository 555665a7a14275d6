// pay_time and order ids are written in UTC+08:00 (China Standard Time), as the original service did.
const OFFSET_MS = 8 * 60 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The last day asked for (days since the epoch, in UTC+08:00) and its date, as `YYYY-MM-DD` and
 * `YYYYMMDD`: every create and every query answer asks, nearly always for today.
 */
let lastDay = NaN;
let lastDate = '';
let lastCompactDate = '';
function remember(day: number): void {
  lastDate = new Date(day * DAY_MS).toISOString().slice(0, 10);
  lastCompactDate = lastDate.replaceAll('-', '');
  lastDay = day;
}

const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`);

/** `YYYY-MM-DD HH:mm:ss` in UTC+08:00 (milliseconds dropped, not rounded). */
export function formatPayTime(epochMs: number): string {
  const local = epochMs + OFFSET_MS;
  const day = Math.floor(local / DAY_MS);
  const seconds = Math.floor((local - day * DAY_MS) / 1000);
  if (day !== lastDay) remember(day);
  return `${lastDate} ${pad2(Math.floor(seconds / 3600))}:${pad2(Math.floor(seconds / 60) % 60)}:${pad2(seconds % 60)}`;
}

/** `YYYYMMDD` in UTC+08:00, the date prefix of an order_id. */
export function orderDate(epochMs: number): string {
  const day = Math.floor((epochMs + OFFSET_MS) / DAY_MS);
  if (day !== lastDay) remember(day);
  return lastCompactDate;
}

/** order_id: the UTC+08:00 date followed by a sequence number of at least 8 digits, e.g. 2020033000001672. */
export function formatOrderId(epochMs: number, sequence: number): string {
  return orderDate(epochMs) + String(sequence).padStart(8, '0');
}

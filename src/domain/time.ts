// pay_time and order ids are written in UTC+08:00 (China Standard Time), as the original service did.
const OFFSET_MS = 8 * 60 * 60 * 1000;

function shifted(epochMs: number): string {
  return new Date(epochMs + OFFSET_MS).toISOString();
}

/** `YYYY-MM-DD HH:mm:ss` in UTC+08:00. */
export function formatPayTime(epochMs: number): string {
  const iso = shifted(epochMs);
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
}

const DAY_MS = 24 * 60 * 60 * 1000;
/** The last day asked for (days since the epoch in UTC+08:00) and its text: every create asks. */
let lastDay = NaN;
let lastDate = '';

/** `YYYYMMDD` in UTC+08:00, the date prefix of an order_id. */
export function orderDate(epochMs: number): string {
  const day = Math.floor((epochMs + OFFSET_MS) / DAY_MS);
  if (day !== lastDay) {
    lastDate = shifted(epochMs).slice(0, 10).replaceAll('-', '');
    lastDay = day;
  }
  return lastDate;
}

/** order_id: the UTC+08:00 date followed by a sequence number of at least 8 digits, e.g. 2020033000001672. */
export function formatOrderId(epochMs: number, sequence: number): string {
  return orderDate(epochMs) + String(sequence).padStart(8, '0');
}

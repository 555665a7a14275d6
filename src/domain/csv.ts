// CSV as spreadsheets read it (RFC 4180: comma, CRLF, quotes doubled). A cell that a spreadsheet
// would take for a formula (starting with =, +, -, @, a tab or a carriage return) is written with a
// leading apostrophe, so an exported merchant_reference or product_name cannot run anything when the
// file is opened (OWASP's "CSV injection"). Amounts are written as decimal text, never numbers in
// float form.

const FORMULA = /^[=+\-@\t\r]/;

export function csvCell(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '';
  let text = String(value);
  if (typeof value === 'string' && FORMULA.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvLine(values: ReadonlyArray<string | number | null | undefined>): string {
  return `${values.map(csvCell).join(',')}\r\n`;
}

// What a bank's import checks first in an ABA (Direct Entry) file, record by record.

/** The format's rules, checked record by record: what a bank's import checks first. */
export function abaProblems(file: string): string[] {
  const problems: string[] = [];
  if (!file.endsWith('\r\n')) problems.push('the last record has no CR LF');
  const records = file.split('\r\n').slice(0, -1);
  let credits = 0;
  let debits = 0;
  let details = 0;
  for (const [i, r] of records.entries()) {
    if (r.length !== 120) problems.push(`record ${i + 1} has ${r.length} characters`);
    const type = r[0];
    if (i === 0 && type !== '0') problems.push('the first record is not type 0');
    if (i === records.length - 1 && type !== '7') problems.push('the last record is not type 7');
    if (type === '0' && !/^0 {17}01[A-Z]{3} {7}.{26}\d{6}.{12}\d{6} {40}$/.test(r))
      problems.push(`record ${i + 1}: bad type 0`);
    if (type === '1') {
      details++;
      if (!/^1\d{3}-\d{3}[ \d]{9}[ NWXY](13|5[0-7])\d{10}.{32}.{18}\d{3}-\d{3}[ \d]{9}.{16}\d{8}$/.test(r))
        problems.push(`record ${i + 1}: bad type 1`);
      const amount = Number(r.slice(20, 30));
      if (r.slice(18, 20) === '13') debits += amount;
      else credits += amount;
    }
    if (type === '7') {
      if (!/^7999-999 {12}\d{10}\d{10}\d{10} {24}\d{6} {40}$/.test(r)) problems.push('bad type 7');
      if (Number(r.slice(20, 30)) !== Math.abs(credits - debits)) problems.push('net total differs');
      if (Number(r.slice(30, 40)) !== credits) problems.push('credit total differs');
      if (Number(r.slice(40, 50)) !== debits) problems.push('debit total differs');
      if (Number(r.slice(74, 80)) !== details) problems.push('count differs');
    }
  }
  return problems;
}

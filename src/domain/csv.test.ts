import { describe, expect, it } from 'vitest';
import { csvCell, csvLine } from './csv.js';

describe('csv', () => {
  it('quotes what needs quoting and doubles quotes', () => {
    expect(csvLine(['a', 'b,c', 'say "hi"', 'two\nlines', null, 12])).toBe(
      'a,"b,c","say ""hi""","two\nlines",,12\r\n'.replace('"two\nlines"', '"two\nlines"'),
    );
  });
  it('defuses cells a spreadsheet would run as formulas, but not negative numbers given as numbers', () => {
    expect(csvCell('=HYPERLINK("http://evil")')).toBe(`"'=HYPERLINK(""http://evil"")"`);
    for (const t of ['+1', '-1', '@SUM(A1)', '\tx']) expect(csvCell(t)).toBe(`'${t}`);
    expect(csvCell(-5)).toBe('-5');
    expect(csvCell('12.50')).toBe('12.50');
  });
});

import { describe, expect, it } from 'vitest';
import { dataTable, labelTables } from './table.js';

describe('tables as cards', () => {
  it("labels each body cell with its column's header, once per row, and marks the table", () => {
    const page =
      '<table id="x"><thead><tr><th scope="col">When</th><th class="num">Amount <span>(NZD)</span></th><th></th></tr></thead>' +
      '<tbody><tr><td>today</td><td class="num">1.00</td><td><form></form></td></tr><tr><td>&lt;td&gt;</td><td>2.00</td><td></td></tr></tbody></table>';
    expect(labelTables(page)).toBe(
      '<table id="x" class="cards"><thead><tr><th scope="col">When</th><th class="num">Amount <span>(NZD)</span></th><th></th></tr></thead>' +
        '<tbody><tr><td data-label="When">today</td><td data-label="Amount (NZD)" class="num">1.00</td><td><form></form></td></tr>' +
        '<tr><td data-label="When">&lt;td&gt;</td><td data-label="Amount (NZD)">2.00</td><td></td></tr></tbody></table>',
    );
  });

  it('leaves a table made by dataTable and one without a header as they are', () => {
    const made = dataTable([{ label: 'A' }], [['1']]).text;
    expect(labelTables(made)).toBe(made);
    const bare = '<table><tbody><tr><td>1</td></tr></tbody></table>';
    expect(labelTables(bare)).toBe(bare);
  });
});

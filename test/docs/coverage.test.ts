// The documents cover what the code does: every environment variable the code reads is in the
// configuration table of docs/operators.md and in the CLI's list (src/cli/environment.ts), every
// CLI command is in docs/operators.md, and every relative link in the Markdown resolves, to a file
// and to a heading in it.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENVIRONMENT } from '../../src/cli/environment.js';
import { COMMANDS } from '../../src/cli/main.js';
import { anchorsOf, linksOf, variablesReadIn } from './markdown.js';

const ROOT = resolve(import.meta.dirname, '../..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

function files(dir: string, keep: (name: string) => boolean): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(ROOT, dir))) {
    const path = join(dir, name);
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
    if (statSync(join(ROOT, path)).isDirectory()) out.push(...files(path, keep));
    else if (keep(name)) out.push(path);
  }
  return out;
}

const SOURCES = files('src', (n) => n.endsWith('.ts') && !n.endsWith('.test.ts'));
const MARKDOWN = ['README.md', 'ARCHITECTURE.md', ...files('docs', (n) => n.endsWith('.md')), ...files('src', (n) => n.endsWith('.md')), 'sdk/README.md'];

/** The rows of docs/operators.md's configuration table: the variable of each. */
function configurationTable(): Map<string, string> {
  const text = read('docs/operators.md');
  const section = text.slice(text.indexOf('## Configuration'), text.indexOf('\n## ', text.indexOf('## Configuration') + 5));
  const rows = new Map<string, string>();
  for (const line of section.split('\n')) {
    const m = /^\| `([A-Z][A-Z0-9_]+)` \| ([^|]*) \|/.exec(line);
    if (m) rows.set(m[1], m[2].trim());
  }
  return rows;
}

describe('the documents cover the configuration', () => {
  const read_ = new Map(SOURCES.map((f) => [f, variablesReadIn(read(f))]));
  const inCode = new Set([...read_.values()].flat());
  const table = configurationTable();

  it('finds what the code reads (the scan itself works)', () => {
    // One read of each shape: process.env.X, env.X in a settings parser, a name passed to a reader.
    for (const name of ['DATABASE_URL', 'NOTIFY_RETRY_SCHEDULE_MS', 'NOTIFY_TIMEOUT_MS', 'NONCE_TTL_MS', 'OTEL_SERVICE_NAME'])
      expect(inCode, name).toContain(name);
    expect(
      variablesReadIn(
        "const a = process.env.SOME_THING; x(env['OTHER_ONE']); positiveEnv('THIRD_ONE'); { env: 'FOURTH' }; 'NOT_READ'",
      ),
    ).toEqual(['SOME_THING', 'OTHER_ONE', 'THIRD_ONE', 'FOURTH']);
  });

  it('every variable the code reads is in the configuration table and in the CLI list', () => {
    const listed = new Set(ENVIRONMENT.map((e) => e.name));
    const missing = [...inCode].filter((n) => !table.has(n) || !listed.has(n));
    expect(missing, 'read by the code but not in docs/operators.md#configuration or src/cli/environment.ts').toEqual([]);
  });

  it('every variable of the CLI list is read by the code and in the table, with the same default', () => {
    for (const e of ENVIRONMENT) {
      expect(inCode, `${e.name} is listed but nothing reads it`).toContain(e.name);
      expect(table.has(e.name), `${e.name} is not in the configuration table`).toBe(true);
      if (e.default !== undefined) expect(table.get(e.name), e.name).toContain(e.default);
    }
  });
});

describe('the documents cover the CLI', () => {
  const operators = read('docs/operators.md');

  it('every command is in docs/operators.md', () => {
    const missing = COMMANDS.filter((c) => !operators.includes(`\`gateway ${c.name}`)).map((c) => c.name);
    expect(missing).toEqual([]);
  });

  it('every flag of every command is named in the docs', () => {
    const all = MARKDOWN.map(read).join('\n');
    const missing = COMMANDS.flatMap((c) => c.flags.filter((f) => !all.includes(`--${f.name}`)).map((f) => `${c.name} --${f.name}`));
    expect(missing).toEqual([]);
  });
});

describe('the documents link to what exists', () => {
  it('reads links and headings as GitHub does', () => {
    expect(anchorsOf('# A title\n## Support: list and resend\n## Two\n## Two\n```\n# not a heading\n```')).toEqual(
      new Set(['a-title', 'support-list-and-resend', 'two', 'two-1']),
    );
    expect(linksOf('see [x](docs/api.md#signatures), [y](https://example.com), `[z](nope.md)`, [w](#two)')).toEqual([
      'docs/api.md#signatures',
      '#two',
    ]);
  });

  it('every relative link resolves to a file, and an anchor to a heading in it', () => {
    const broken: string[] = [];
    for (const file of MARKDOWN) {
      for (const link of linksOf(read(file))) {
        const [path = '', anchor] = link.split('#');
        const target = path === '' ? join(ROOT, file) : resolve(join(ROOT, dirname(file)), decodeURIComponent(path));
        if (!existsSync(target)) {
          broken.push(`${file}: ${link} (no such file)`);
          continue;
        }
        if (anchor && target.endsWith('.md') && !anchorsOf(readFileSync(target, 'utf8')).has(anchor))
          broken.push(`${file}: ${link} (no heading #${anchor} in ${relative(ROOT, target)})`);
      }
    }
    expect(broken).toEqual([]);
  });
});

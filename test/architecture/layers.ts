// The layers of src/ and what each may import (ARCHITECTURE.md). Dependencies point inward: the
// domain imports nothing of the gateway's; the ports (interfaces) only the domain; the use cases
// only these two; the adapters (store, signals, notify, connectors, pages, http) what is inside them;
// the entry points (cli, server.ts) anything.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, dirname } from 'node:path';

export type Layer =
  | 'domain'
  | 'ports'
  | 'usecases'
  | 'outbound'
  | 'store'
  | 'signals'
  | 'notify'
  | 'connectors'
  | 'pages'
  | 'metrics'
  | 'tracing'
  | 'mail'
  | 'http'
  | 'cli'
  | 'root';

/** The gateway's layers each layer may import (its own is always allowed). */
export const ALLOWED: Readonly<Record<Layer, readonly Layer[]>> = {
  domain: [],
  ports: ['domain'],
  usecases: ['domain', 'ports'],
  store: ['domain', 'ports'],
  signals: ['domain', 'ports'],
  // One HTTP exchange read whole, for the two adapters that call out: providers and merchants.
  outbound: [],
  notify: ['domain', 'ports', 'outbound'],
  pages: ['domain'],
  connectors: ['domain', 'ports', 'usecases', 'pages', 'outbound'],
  // The operator's instruments: they wrap what the use cases see (connectors, the store's figures).
  metrics: ['domain', 'ports', 'usecases'],
  tracing: ['domain', 'ports', 'usecases'],
  // The console's email: its texts are the console's catalogues (pages), sent over SMTP.
  mail: ['domain', 'ports', 'pages'],
  http: ['domain', 'ports', 'usecases', 'pages', 'metrics', 'tracing'],
  cli: ['domain', 'ports', 'usecases', 'store', 'signals', 'notify', 'connectors', 'pages', 'root'],
  root: [
    'domain',
    'ports',
    'usecases',
    'outbound',
    'store',
    'signals',
    'notify',
    'connectors',
    'pages',
    'metrics',
    'tracing',
    'mail',
    'http',
    'cli',
  ],
};

/** Packages and Node modules a layer may import; a layer not listed may import any. Pure code does no I/O. */
export const ALLOWED_PACKAGES: Partial<Readonly<Record<Layer, readonly string[]>>> = {
  domain: ['node:crypto', 'node:zlib', 'node:module', 'qrcode', 'otpauth'],
  ports: [],
  usecases: ['node:crypto'],
  outbound: ['undici'],
};

export interface Violation {
  file: string;
  imports: string;
  why: string;
}

export function layerOf(srcDir: string, file: string): Layer {
  const rel = relative(srcDir, file);
  const top = rel.split(/[\\/]/)[0];
  return top === rel ? 'root' : (top as Layer);
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'";]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

/** What each file imports, from its text (static imports and exports, and dynamic import()). */
export function importsOf(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(IMPORT)) out.push(m[1] ?? m[2]);
  return out;
}

/** The violations among `files` (path and text), judged as files of `srcDir`. */
export function checkLayers(srcDir: string, files: Array<{ path: string; text: string }>): Violation[] {
  const violations: Violation[] = [];
  for (const { path, text } of files) {
    const from = layerOf(srcDir, path);
    for (const spec of importsOf(text)) {
      if (spec.startsWith('.')) {
        const target = resolve(dirname(path), spec);
        if (!target.startsWith(srcDir)) continue;
        const to = layerOf(srcDir, target);
        if (to !== from && !ALLOWED[from].includes(to)) {
          violations.push({
            file: relative(srcDir, path),
            imports: spec,
            why: `${from} may not import ${to} (allowed: ${ALLOWED[from].join(', ') || 'none'})`,
          });
        }
      } else {
        const packages = ALLOWED_PACKAGES[from];
        if (packages && !packages.includes(spec)) {
          violations.push({
            file: relative(srcDir, path),
            imports: spec,
            why: `${from} may not import the package ${spec} (allowed: ${packages.join(', ') || 'none'})`,
          });
        }
      }
    }
  }
  return violations;
}

/** Every non-test .ts file under `dir`. */
export function sourceFiles(dir: string): Array<{ path: string; text: string }> {
  const out: Array<{ path: string; text: string }> = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (name.endsWith('.ts') && !name.endsWith('.test.ts')) out.push({ path, text: readFileSync(path, 'utf8') });
  }
  return out;
}

/**
 * The import cycles among `files` (value imports: `import type` is erased and runs nothing), each
 * as the files around it, relative to `srcDir`, the first one repeated at the end.
 */
export function importCycles(srcDir: string, files: Array<{ path: string; text: string }>): string[][] {
  const edges = new Map<string, string[]>();
  for (const { path, text } of files) {
    const valueImports = importsOf(text.replaceAll(/^(?:import|export) type [^;]*;/gm, ''));
    edges.set(
      path,
      valueImports.filter((s) => s.startsWith('.')).map((s) => resolve(dirname(path), s).replace(/\.js$/, '.ts')),
    );
  }
  const cycles: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of edges.get(file) ?? []) {
      if (!edges.has(next)) continue;
      if (state.get(next) === 'open')
        cycles.push([...stack.slice(stack.indexOf(next)), next].map((f) => relative(srcDir, f)));
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of edges.keys()) if (!state.has(file)) visit(file);
  return cycles;
}

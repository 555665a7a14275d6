// Dependencies point inward: each layer of src/ imports only the layers inside it (layers.ts).
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkLayers, importCycles, importsOf, layerOf, sourceFiles } from './layers.js';

const SRC = resolve(import.meta.dirname, '../../src');

describe('layering of src/', () => {
  it('no layer imports one it must not', () => {
    const files = sourceFiles(SRC);
    expect(files.length).toBeGreaterThan(50);
    expect(checkLayers(SRC, files)).toEqual([]);
  });

  it('every top-level folder of src/ is a known layer', () => {
    const layers = new Set(sourceFiles(SRC).map((f) => layerOf(SRC, f.path)));
    for (const layer of layers)
      expect([
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
        'root',
      ]).toContain(layer);
  });

  it('catches what it must: an inner layer importing an outer one, or a package it must not use', () => {
    const file = (path: string, text: string) => ({ path: join(SRC, path), text });
    const found = checkLayers(SRC, [
      file('domain/x.ts', "import { y } from '../store/open.js';\nimport type { Z } from './z.js';"),
      file('usecases/x.ts', "import type { FastifyInstance } from 'fastify';\nimport { a } from '../domain/money.js';"),
      file('store/x.ts', "export { b } from '../usecases/context.js';"),
      file('ports/x.ts', "const m = await import('../signals/status-signals.js');"),
      file('http/x.ts', "import {\n  c,\n} from '../store/open.js';"),
      file('pages/x.ts', "import { d } from '../pages/html.js';\nimport { e } from '../domain/money.js';"),
    ]);
    expect(found.map((v) => `${v.file} -> ${v.imports}`)).toEqual([
      'domain/x.ts -> ../store/open.js',
      'usecases/x.ts -> fastify',
      'store/x.ts -> ../usecases/context.js',
      'ports/x.ts -> ../signals/status-signals.js',
      'http/x.ts -> ../store/open.js',
    ]);
  });

  it('reads imports, exports and dynamic imports', () => {
    expect(
      importsOf(
        "import a from 'x';\nimport type { B } from \"q\";\nexport * from './y.js';\nconst c = await import('./z.js');",
      ),
    ).toEqual(['x', 'q', './y.js', './z.js']);
  });

  it('no file imports, through others, a file that imports it (no import cycle)', () => {
    expect(importCycles(SRC, sourceFiles(SRC))).toEqual([]);
  });

  it('finds a cycle, and not one through a type-only import', () => {
    const file = (path: string, text: string) => ({ path: join(SRC, path), text });
    const cycles = importCycles(SRC, [
      file('http/a.ts', "import { b } from './b.js';"),
      file('http/b.ts', "import { c } from './c.js';"),
      file('http/c.ts', "import { a } from './a.js';"),
      file('http/d.ts', "import type { E } from './e.js';"),
      file('http/e.ts', "import { d } from './d.js';"),
    ]);
    expect(cycles).toEqual([['http/a.ts', 'http/b.ts', 'http/c.ts', 'http/a.ts']]);
  });
});

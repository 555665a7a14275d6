import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// The pages' CSS and JS are plain files in src/pages/assets, served by the gateway itself at
// /assets/{name}?v={hash}: no build step and nothing fetched from another host. They are read once;
// the hash in the URL changes with the content, so browsers may cache them for a long time.

export interface Asset {
  body: Buffer;
  type: string;
  hash: string;
}

const TYPES: Readonly<Record<string, string>> = {
  'checkout.css': 'text/css; charset=utf-8',
  'checkout.js': 'text/javascript; charset=utf-8',
  'console.css': 'text/css; charset=utf-8',
};

// Run from source (tests, tsx) the files sit next to this module; compiled, this module is in
// dist/src/pages and the files stay in src/pages/assets.
function assetDir(): string {
  const candidates = [new URL('./assets/', import.meta.url), new URL('../../../src/pages/assets/', import.meta.url)];
  for (const c of candidates) if (existsSync(new URL('checkout.css', c))) return fileURLToPath(c);
  throw new Error('the hosted page assets (src/pages/assets) are missing');
}

let loaded: Map<string, Asset> | undefined;

function assets(): Map<string, Asset> {
  if (loaded) return loaded;
  const dir = assetDir();
  const map = new Map<string, Asset>();
  for (const [name, type] of Object.entries(TYPES)) {
    const body = readFileSync(dir + name);
    map.set(name, { body, type, hash: createHash('sha256').update(body).digest('hex').slice(0, 12) });
  }
  loaded = map;
  return map;
}

export function findAsset(name: string): Asset | undefined {
  return assets().get(name);
}

/** The URL to reference an asset by, e.g. /assets/checkout.css?v=3f2a9c0d1e4b. */
export function assetUrl(name: string): string {
  const a = assets().get(name);
  return `/assets/${name}${a ? `?v=${a.hash}` : ''}`;
}

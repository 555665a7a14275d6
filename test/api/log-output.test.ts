// The log of a real `gateway serve` process on its standard output. Lines are written in batches
// (src/server.ts), so this checks that batching loses nothing: a line reaches stdout on its own
// after a short while even when no more requests come, and every line is out when the process
// stops on SIGTERM.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/ports.js';
import { until } from '../support/wait.js';

const ROOT = resolve(import.meta.dirname, '../..');

describe('gateway serve: log lines on standard output', () => {
  let dir: string;
  let child: ChildProcess;
  let stdout = '';
  let url: string;
  const lines = () =>
    stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg: string; url?: string; statusCode?: number });

  beforeAll(async () => {
    if (!existsSync(join(ROOT, 'dist/src/cli/main.js')))
      throw new Error('the CLI is not built: run `npm run build` (npm test does)');
    dir = mkdtempSync(join(tmpdir(), 'gw-log-'));
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    child = spawn(
      process.execPath,
      ['bin/gateway.js', 'serve', '--database', join(dir, 'g.db'), '--port', String(port), '--host', '127.0.0.1'],
      {
        cwd: ROOT,
        env: { ...process.env, DATABASE_URL: '', LOG_LEVEL: 'info' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    child.stdout!.on('data', (b: Buffer) => (stdout += b.toString()));
    await until(
      'the gateway to answer /healthz',
      () =>
        fetch(`${url}/healthz`).then(
          (r) => r.ok,
          () => false,
        ),
      20_000,
    );
  });
  afterAll(() => {
    child?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('a lone request line reaches stdout without more traffic to push it out', async () => {
    await fetch(`${url}/v2/no-such-endpoint-1`);
    await until(
      'the request line',
      () => lines().some((l) => l.url === '/v2/no-such-endpoint-1' && l.statusCode === 404),
      5_000,
    );
  });

  it('every line written before SIGTERM is on stdout when the process has exited', async () => {
    const paths = Array.from({ length: 30 }, (_, i) => `/v2/no-such-endpoint-burst-${i}`);
    for (const p of paths) await fetch(p.startsWith('/') ? `${url}${p}` : p);
    const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    const logged = new Set(lines().map((l) => l.url));
    for (const p of paths) expect(logged.has(p), p).toBe(true);
  });
});

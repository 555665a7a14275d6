// `gateway serve` in a child process of its own (for tests that kill it), ready once /healthz answers.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { until } from './wait.js';

export const ROOT = resolve(import.meta.dirname, '../..');
export const BIN = join(ROOT, 'bin/gateway.js');

/** Throws unless the CLI is built (npm test builds it first). */
export function requireBuiltCli(): void {
  if (!existsSync(join(ROOT, 'dist/src/cli/main.js')))
    throw new Error('the CLI is not built: run `npm run build` (npm test does)');
}

export async function serveProcess(
  database: string,
  port: number,
  env: Record<string, string> = {},
): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [BIN, 'serve', '--database', database, '--port', String(port), '--host', '127.0.0.1'],
    {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: '', LOG_LEVEL: 'warn', NOTIFY_ENABLED: 'false', ...env },
      stdio: 'ignore',
    },
  );
  try {
    await until(
      'the gateway to start',
      () =>
        fetch(`http://127.0.0.1:${port}/healthz`).then(
          (r) => r.ok,
          () => false,
        ),
      20_000,
    );
  } catch (e) {
    child.kill('SIGKILL');
    throw e;
  }
  return child;
}

/** Resolves once the child has exited (at once if it has). */
export function exited(child: ChildProcess): Promise<void> {
  return new Promise((done) =>
    child.exitCode !== null || child.signalCode !== null ? done() : child.once('exit', () => done()),
  );
}

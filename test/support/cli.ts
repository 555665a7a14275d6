import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');

/** Runs the built `gateway` CLI (bin/gateway.js) with `args`: its exit code and output. */
export function gatewayCli(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [join(ROOT, 'bin/gateway.js'), ...args],
      { cwd: ROOT, env: { ...process.env, DATABASE_URL: '', ...env }, timeout: 20_000 },
      (err, stdout, stderr) => done({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
    );
  });
}

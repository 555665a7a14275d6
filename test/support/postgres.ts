// Vitest globalSetup: a throwaway PostgreSQL server for one test run.
//
// - If PG_URL is already set, it is used as is and nothing is started.
// - Otherwise: initdb into a fresh temp dir, start `postgres` on a free port on
//   127.0.0.1 (unix socket in the temp dir, fsync off, max_connections 300),
//   wait until it accepts connections, create database `test`.
// - The URL reaches tests as `inject('pgUrl')` and as process.env.PG_URL
//   (set here in the main process before the forks that run tests start).
// - PostgreSQL refuses to run as root: as root, initdb and postgres run as the
//   `postgres` system user (created as `pgtest` with useradd if missing).
// - Teardown stops the server and removes the temp dir. If the Vitest process
//   dies without teardown, an exit hook and a detached watchdog shell do it.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  accessSync,
  chownSync,
  constants,
  existsSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { freePort } from './ports.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** URL of the test run's PostgreSQL database (postgres://...). */
    pgUrl: string;
  }
}

const DB_NAME = 'test';
const SUPERUSER = 'postgres';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const given = process.env.PG_URL;
  if (given) {
    project.provide('pgUrl', given);
    return async () => {};
  }

  const server = await startPostgres();
  process.env.PG_URL = server.url;
  project.provide('pgUrl', server.url);
  return server.stop;
}

export interface RunAs {
  uid: number;
  gid: number;
}

export interface PostgresServer {
  url: string;
  stop: () => Promise<void>;
  /** Shuts the server down (fast: connections are cut), keeping its data, port and URL. */
  halt: () => Promise<void>;
  /** Starts it again after halt(), on the same port with the same data. */
  resume: () => Promise<void>;
}

/** Start a throwaway server. Exported so scripts and tests (e.g. one that stops PostgreSQL) can use it outside Vitest's. */
export async function startPostgres(): Promise<PostgresServer> {
  const bin = findBinDir();
  const runAs = process.getuid?.() === 0 ? unprivilegedUser() : undefined;
  const dir = mkdtempSync(join(tempBase(), 'pg-test-'));
  const data = join(dir, 'data');
  if (runAs) chownSync(dir, runAs.uid, runAs.gid);

  let child: ChildProcess | undefined;
  let watchdog: ChildProcess | undefined;
  // Runs on any exit of this process that skipped teardown; the watchdog is left
  // running so it can finish the job once postgres has gone.
  const cleanupSync = () => {
    if (child && child.exitCode === null && child.signalCode === null && child.pid) {
      try {
        process.kill(child.pid, 'SIGQUIT');
      } catch {
        /* already gone */
      }
    }
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      /* the watchdog retries */
    }
  };
  process.once('exit', cleanupSync);
  const stopWatchdog = () => {
    if (watchdog?.pid && watchdog.exitCode === null) {
      try {
        process.kill(watchdog.pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
  };
  /** Starts postgres on `port` and waits until it answers; the child is left in `child`. */
  const run = async (port: number): Promise<void> => {
    const log: string[] = [];
    child = spawn(
      join(bin, 'postgres'),
      [
        '-D',
        data,
        '-p',
        String(port),
        '-h',
        '127.0.0.1',
        '-k',
        dir,
        '-c',
        'fsync=off',
        '-c',
        'synchronous_commit=off',
        '-c',
        'full_page_writes=off',
        '-c',
        'max_connections=300',
        '-c',
        'logging_collector=off',
      ],
      { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], ...runAs, env: pgEnv() },
    );
    child.stdout!.on('data', (b: Buffer) => keepTail(log, b));
    child.stderr!.on('data', (b: Buffer) => keepTail(log, b));
    // Do not keep Vitest alive because of the server or its pipes.
    child.unref();
    (child.stdout as unknown as { unref?: () => void }).unref?.();
    (child.stderr as unknown as { unref?: () => void }).unref?.();
    try {
      await waitReady(`postgres://${SUPERUSER}@127.0.0.1:${port}/postgres`, child, log);
    } catch (err) {
      if (child.exitCode === null) {
        child.kill('SIGKILL');
        await exited(child, 5000);
      }
      throw err;
    }
    watchdog = startWatchdog(child.pid!, dir);
  };
  const shutDown = async (signal: NodeJS.Signals) => {
    const running = child;
    if (running && running.exitCode === null && running.signalCode === null) {
      running.kill(signal);
      if (!(await exited(running, 10_000))) {
        running.kill('SIGKILL');
        await exited(running, 5000);
      }
    }
    stopWatchdog();
  };

  try {
    const init = spawnSync(
      join(bin, 'initdb'),
      ['-D', data, '-U', SUPERUSER, '--auth=trust', '--encoding=UTF8', '--locale=C', '--no-sync'],
      { cwd: dir, encoding: 'utf8', ...runAs, env: pgEnv() },
    );
    if (init.status !== 0) {
      throw new Error(`initdb failed (${init.error?.message ?? `exit ${init.status}`}):\n${init.stdout}${init.stderr}`);
    }

    let lastError: Error | undefined;
    for (let attempt = 0; attempt < 5; attempt++) {
      const port = await freePort();
      try {
        await run(port);
      } catch (err) {
        lastError = err as Error;
        continue; // most likely the port was taken in between: try another
      }
      const base = `postgres://${SUPERUSER}@127.0.0.1:${port}`;
      const admin = new pg.Client({ connectionString: `${base}/postgres` });
      await admin.connect();
      try {
        await admin.query(`CREATE DATABASE ${DB_NAME}`);
      } finally {
        await admin.end();
      }

      let stopped = false;
      return {
        url: `${base}/${DB_NAME}`,
        stop: async () => {
          if (stopped) return;
          stopped = true;
          await shutDown('SIGQUIT'); // immediate shutdown
          cleanupSync();
          process.removeListener('exit', cleanupSync);
        },
        halt: () => shutDown('SIGINT'),
        resume: () => run(port),
      };
    }
    throw lastError ?? new Error('postgres did not start');
  } catch (err) {
    if (child && child.exitCode === null) {
      child.kill('SIGKILL');
      await exited(child, 5000);
    }
    stopWatchdog();
    cleanupSync();
    process.removeListener('exit', cleanupSync);
    throw err;
  }
}

/** Directory holding initdb, pg_ctl and postgres: PATH first, then the newest /usr/lib/postgresql/N/bin. */
export function findBinDir(): string {
  const ok = (d: string) => ['initdb', 'pg_ctl', 'postgres'].every((b) => isExecutable(join(d, b)));
  for (const d of (process.env.PATH ?? '').split(delimiter)) {
    if (!d || !isExecutable(join(d, 'initdb'))) continue;
    const real = dirname(realpathSync(join(d, 'initdb'))); // /usr/local/bin/initdb may be a symlink
    if (ok(real)) return real;
    if (ok(d)) return d;
  }
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => /^\d+(\.\d+)?$/.test(v)) : [];
  versions.sort((a, b) => Number(b) - Number(a));
  for (const v of versions) if (ok(join(root, v, 'bin'))) return join(root, v, 'bin');
  throw new Error(
    'PostgreSQL server binaries (initdb, pg_ctl, postgres) not found on PATH or under /usr/lib/postgresql/*/bin; ' +
      'install them (Debian: apt-get install postgresql) or set PG_URL to an existing server',
  );
}

function isExecutable(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

/** uid/gid of the `postgres` user, or of `pgtest`, created if needed. Only called as root. */
export function unprivilegedUser(): RunAs {
  for (const name of ['postgres', 'pgtest']) {
    const id = lookupUser(name);
    if (id) return id;
  }
  const r = spawnSync(
    'useradd',
    [
      '--system',
      '--user-group',
      '--no-create-home',
      '--home-dir',
      '/nonexistent',
      '--shell',
      '/usr/sbin/nologin',
      'pgtest',
    ],
    { encoding: 'utf8' },
  );
  const id = lookupUser('pgtest');
  if (!id)
    throw new Error(
      `could not create user pgtest to run PostgreSQL (root is refused): ${r.error?.message ?? ''}${r.stderr}`,
    );
  return id;
}

function lookupUser(name: string): RunAs | undefined {
  const r = spawnSync('getent', ['passwd', name], { encoding: 'utf8' });
  const f = r.status === 0 ? r.stdout.trim().split(':') : [];
  return f.length >= 4 ? { uid: Number(f[2]), gid: Number(f[3]) } : undefined;
}

/** os.tmpdir(), unless running as root and another user could not reach it. */
export function tempBase(): string {
  const base = tmpdir();
  if (process.getuid?.() !== 0) return base;
  for (let d = realpathSync(base); ; d = dirname(d)) {
    if ((statSync(d).mode & 0o001) === 0) return '/tmp';
    if (d === dirname(d)) return base;
  }
}

/** Environment for the server: ours minus PG* variables that could redirect it. */
export function pgEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, LC_ALL: 'C' };
  for (const k of Object.keys(env)) if (k.startsWith('PG')) delete env[k];
  return env;
}

export async function waitReady(url: string, child: ChildProcess, log: string[]): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`postgres exited (${child.exitCode ?? child.signalCode}):\n${log.join('')}`);
    }
    const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
    try {
      await c.connect();
      await c.query('select 1');
      await c.end();
      return;
    } catch (err) {
      await c.end().catch(() => {});
      if (Date.now() > deadline)
        throw new Error(`postgres not ready after 30 s: ${(err as Error).message}\n${log.join('')}`, { cause: err });
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

export function exited(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(t);
      resolve(true);
    });
  });
}

export function keepTail(log: string[], b: Buffer): void {
  log.push(b.toString());
  if (log.length > 200) log.splice(0, log.length - 200);
}

/**
 * A detached shell that outlives us: once this process is gone (even by SIGKILL,
 * when no exit hook runs) it stops the server and removes its directory.
 */
function startWatchdog(pgPid: number, dir: string): ChildProcess {
  const script =
    'while kill -0 "$1" 2>/dev/null; do sleep 1; done; ' +
    'kill -QUIT "$2" 2>/dev/null; sleep 3; kill -KILL "$2" 2>/dev/null; rm -rf "$3"';
  const w = spawn('/bin/sh', ['-c', script, 'pg-watchdog', String(process.pid), String(pgPid), dir], {
    detached: true,
    stdio: 'ignore',
  });
  w.unref();
  return w;
}

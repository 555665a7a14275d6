// Two PostgreSQL clusters for a failover test: a primary, and a hot standby made from it with
// `pg_basebackup -R` that streams its WAL synchronously (synchronous_standby_names = '*', so a
// commit is acknowledged only once the standby has it). The primary can be killed as a machine
// dies (SIGKILL to its whole process group: the postmaster and every backend at once) and the
// standby promoted with `pg_ctl promote`.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { appendFileSync, chownSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './ports.js';
import { exited, findBinDir, keepTail, pgEnv, tempBase, unprivilegedUser, waitReady } from './postgres.js';

export interface PgPair {
  /** Both hosts, libpq style, with the database `gw`: postgres://postgres@127.0.0.1:P1,127.0.0.1:P2/gw?target_session_attrs=read-write */
  url: string;
  /** Each cluster's own URL of the database `gw`. */
  primaryUrl: string;
  standbyUrl: string;
  /** The standby named first, the primary second. */
  standbyFirstUrl: string;
  /** SIGKILL to the primary's postmaster and all its backends at once. */
  killPrimary(): Promise<void>;
  /** `pg_ctl promote` on the standby; resolves once it takes writes. */
  promoteStandby(): Promise<void>;
  stop(): Promise<void>;
}

const SUPERUSER = 'postgres';

export async function startPgPair(): Promise<PgPair> {
  const bin = findBinDir();
  const runAs = process.getuid?.() === 0 ? unprivilegedUser() : undefined;
  const dir = mkdtempSync(join(tempBase(), 'pg-pair-'));
  if (runAs) chownSync(dir, runAs.uid, runAs.gid);
  const children: ChildProcess[] = [];
  const run = (cmd: string, args: string[]) => {
    const r = spawnSync(join(bin, cmd), args, { cwd: dir, encoding: 'utf8', ...runAs, env: pgEnv() });
    if (r.status !== 0)
      throw new Error(`${cmd} failed (${r.error?.message ?? `exit ${r.status}`}):\n${r.stdout}${r.stderr}`);
  };
  const start = async (data: string, port: number, extra: string[]) => {
    const log: string[] = [];
    // Its own process group: killing the group is the machine going away, backends included.
    const child = spawn(
      join(bin, 'postgres'),
      ['-D', data, '-p', String(port), '-h', '127.0.0.1', '-k', dir, '-c', 'fsync=off', ...extra],
      { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], detached: true, ...runAs, env: pgEnv() },
    );
    child.stdout.on('data', (b: Buffer) => keepTail(log, b));
    child.stderr.on('data', (b: Buffer) => keepTail(log, b));
    child.unref();
    children.push(child);
    await waitReady(`postgres://${SUPERUSER}@127.0.0.1:${port}/postgres`, child, log);
    return child;
  };
  try {
    const primaryData = join(dir, 'primary');
    const standbyData = join(dir, 'standby');
    run('initdb', ['-D', primaryData, '-U', SUPERUSER, '--auth=trust', '--encoding=UTF8', '--locale=C', '--no-sync']);
    const p1 = await freePort();
    const p2 = await freePort();
    const common = ['-c', 'max_connections=200', '-c', 'logging_collector=off', '-c', 'wal_level=replica'];
    const primary = await start(primaryData, p1, [...common, '-c', 'synchronous_standby_names=*']);
    run('pg_basebackup', [
      '-h',
      '127.0.0.1',
      '-p',
      String(p1),
      '-U',
      SUPERUSER,
      '-D',
      standbyData,
      '-R',
      '-X',
      'stream',
    ]);
    // Once promoted, the standby is a primary with no standby of its own: it must not wait for one.
    appendFileSync(join(standbyData, 'postgresql.auto.conf'), "synchronous_standby_names = ''\n");
    await start(standbyData, p2, common);
    const admin = new pg.Client({ connectionString: `postgres://${SUPERUSER}@127.0.0.1:${p1}/postgres` });
    await admin.connect();
    try {
      await admin.query('CREATE DATABASE gw');
      // The standby streams synchronously before the test begins.
      for (let i = 0; ; i++) {
        const r = await admin.query<{ sync_state: string }>('select sync_state from pg_stat_replication');
        if (r.rows[0]?.sync_state === 'sync') break;
        if (i > 100) throw new Error(`the standby is not streaming synchronously: ${JSON.stringify(r.rows)}`);
        await new Promise((res) => setTimeout(res, 100));
      }
    } finally {
      await admin.end();
    }
    const host = (p: number) => `127.0.0.1:${p}`;
    return {
      url: `postgres://${SUPERUSER}@${host(p1)},${host(p2)}/gw?target_session_attrs=read-write`,
      primaryUrl: `postgres://${SUPERUSER}@${host(p1)}/gw`,
      standbyUrl: `postgres://${SUPERUSER}@${host(p2)}/gw`,
      standbyFirstUrl: `postgres://${SUPERUSER}@${host(p2)},${host(p1)}/gw`,
      async killPrimary() {
        process.kill(-primary.pid!, 'SIGKILL');
        await exited(primary, 5000);
      },
      async promoteStandby() {
        run('pg_ctl', ['promote', '-w', '-D', standbyData]);
      },
      async stop() {
        for (const c of children)
          if (c.exitCode === null && c.signalCode === null) {
            try {
              process.kill(-c.pid!, 'SIGKILL');
            } catch {
              /* gone */
            }
            await exited(c, 5000);
          }
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}

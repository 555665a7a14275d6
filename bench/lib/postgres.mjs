// A throwaway PostgreSQL cluster for the benchmark: initdb into a temp dir, start on a free
// port on 127.0.0.1, create database `bench`, stop and remove everything at the end.
// Same approach as test/support/postgres.ts (as root the server runs as the `postgres` user),
// but with PostgreSQL's durable defaults (fsync on), since the benchmark measures real commits.
import { spawn, spawnSync } from 'node:child_process';
import {
  accessSync,
  chownSync,
  constants,
  mkdtempSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  statSync,
  existsSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { delimiter, dirname, join } from 'node:path';
import pg from 'pg';

function isExecutable(p) {
  try {
    accessSync(p, constants.X_OK);
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

function findBinDir() {
  const ok = (d) => ['initdb', 'postgres'].every((b) => isExecutable(join(d, b)));
  for (const d of (process.env.PATH ?? '').split(delimiter)) {
    if (!d || !isExecutable(join(d, 'initdb'))) continue;
    const real = dirname(realpathSync(join(d, 'initdb')));
    if (ok(real)) return real;
    if (ok(d)) return d;
  }
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => /^\d+$/.test(v))
        .sort((a, b) => b - a)
    : [];
  for (const v of versions) if (ok(join(root, v, 'bin'))) return join(root, v, 'bin');
  throw new Error('PostgreSQL binaries (initdb, postgres) not found');
}

function runAsUser() {
  if (process.getuid?.() !== 0) return {};
  for (const name of ['postgres', 'pgtest']) {
    const r = spawnSync('getent', ['passwd', name], { encoding: 'utf8' });
    const f = r.status === 0 ? r.stdout.trim().split(':') : [];
    if (f.length >= 4) return { uid: Number(f[2]), gid: Number(f[3]) };
  }
  throw new Error('running as root and no `postgres` user to run PostgreSQL as');
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function pgEnv() {
  const env = { ...process.env, LC_ALL: 'C' };
  for (const k of Object.keys(env)) if (k.startsWith('PG')) delete env[k];
  return env;
}

/** Starts a cluster; returns { url, adminUrl, stop }. */
export async function startPostgres({ extraConf = [] } = {}) {
  const bin = findBinDir();
  const runAs = runAsUser();
  const dir = mkdtempSync('/tmp/gw-bench-pg-');
  if (runAs.uid !== undefined) chownSync(dir, runAs.uid, runAs.gid);
  const data = join(dir, 'data');
  const init = spawnSync(
    join(bin, 'initdb'),
    ['-D', data, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C', '--no-sync'],
    { cwd: dir, encoding: 'utf8', ...runAs, env: pgEnv() },
  );
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stdout}${init.stderr}`);
  const port = await freePort();
  const log = [];
  const child = spawn(
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
      'max_connections=300',
      '-c',
      'shared_buffers=256MB',
      '-c',
      'logging_collector=off',
      ...extraConf.flatMap((c) => ['-c', c]),
    ],
    { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], ...runAs, env: pgEnv() },
  );
  child.stdout.on('data', (b) => {
    log.push(String(b));
    if (log.length > 100) log.shift();
  });
  child.stderr.on('data', (b) => {
    log.push(String(b));
    if (log.length > 100) log.shift();
  });
  const kill = () => {
    try {
      child.kill('SIGQUIT');
    } catch {
      /* gone */
    }
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      /* */
    }
  };
  process.once('exit', kill);
  const base = `postgres://postgres@127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`postgres exited: ${log.join('')}`);
    const c = new pg.Client({ connectionString: `${base}/postgres`, connectionTimeoutMillis: 1000 });
    try {
      await c.connect();
      await c.query('select 1');
      await c.end();
      break;
    } catch (e) {
      await c.end().catch(() => {});
      if (Date.now() > deadline) {
        kill();
        throw new Error(`postgres not ready: ${e.message}\n${log.join('')}`, { cause: e });
      }
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const admin = new pg.Client({ connectionString: `${base}/postgres` });
  await admin.connect();
  let n = 0;
  const server = {
    adminUrl: `${base}/postgres`,
    /**
     * CPU time of the whole server so far (ms): the postmaster, its live processes (backends,
     * WAL writer, checkpointer...), and those it has reaped (their time is added to its own).
     */
    cpuMs() {
      const stat = (pid) => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      const own = stat(child.pid);
      let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
      for (const pid of readdirSync('/proc')) {
        if (!/^\d+$/.test(pid)) continue;
        try {
          const f = stat(pid);
          if (Number(f[1]) === child.pid) ticks += Number(f[11]) + Number(f[12]);
        } catch {
          /* gone meanwhile */
        }
      }
      return ticks * 10;
    },
    /** A fresh, empty database for one server under test. */
    async createDatabase(prefix = 'bench') {
      const name = `${prefix}_${++n}`;
      await admin.query(`CREATE DATABASE ${name}`);
      return `${base}/${name}`;
    },
    async stop() {
      await admin.end().catch(() => {});
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGINT'); // fast shutdown
        await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      }
      kill();
      process.removeListener('exit', kill);
    },
  };
  return server;
}

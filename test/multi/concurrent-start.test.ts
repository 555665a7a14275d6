// Several `gateway serve` processes started at once on one empty PostgreSQL database (as an
// orchestrator starts replicas): all come up, including with --demo. Needs `npm run build`.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, inject, it } from 'vitest';
import { createTestDatabase } from '../support/pg-db.js';
import { pgQuery } from './pair.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function serve(database: string, args: string[]): Promise<{ ok: boolean; output: string }> {
  const child = spawn(process.execPath, ['bin/gateway.js', 'serve', '--port', '0', '--host', '127.0.0.1', ...args], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: database, LOG_LEVEL: 'info', NOTIFY_ENABLED: 'false' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve) => {
    let output = '';
    // With --demo, its last line: the demo merchant owner's console link.
    const ready = args.includes('--demo') ? 'owner@demo.example' : 'gateway ready';
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    let started = false;
    const onData = (d: Buffer) => {
      output += d.toString();
      if (!started && output.includes(ready)) {
        started = true;
        child.kill('SIGKILL');
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ ok: started, output: `exit ${code} ${signal}\n${output}` });
    });
  });
}

describe('starting several instances at once', () => {
  it(
    'three `gateway serve --demo` on an empty database all start, with one demo merchant',
    { timeout: 60_000 },
    async () => {
      if (!existsSync(`${ROOT}/dist/src/cli/main.js`))
        throw new Error('dist/ is missing: run `npm run build` first (npm test does)');
      const database = await createTestDatabase(inject('pgUrl'));
      const results = await Promise.all([
        serve(database, ['--demo']),
        serve(database, ['--demo']),
        serve(database, ['--demo']),
      ]);
      for (const r of results) expect(r.ok, r.output).toBe(true);
      const users = await pgQuery(database, 'select user_id from users');
      expect(users).toEqual([{ user_id: 'U000000001' }]);
      // And one of each demo console user, whoever made it; every instance printed where to set its password.
      const consoleUsers = await pgQuery(database, 'select email, kind, role from console_users order by email');
      expect(consoleUsers).toEqual([
        { email: 'admin@demo.example', kind: 'operator', role: 'admin' },
        { email: 'owner@demo.example', kind: 'merchant', role: 'owner' },
      ]);
      for (const r of results)
        expect(r.output).toMatch(
          /admin@demo\.example \(operator admin\)\s+(set its password: http\S+\/console\/welcome\/|made by another instance)/,
        );
    },
  );
});

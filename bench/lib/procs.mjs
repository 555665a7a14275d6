// Child processes for the servers under test, started with fork() and driven over IPC.
import { fork } from 'node:child_process';
import { openSync, readFileSync } from 'node:fs';

/**
 * Starts `script` with a JSON config and waits for its { type: 'ready' } message.
 * stdout goes to `logFile` (or /dev/null): the gateway's request log is written as in production.
 */
export async function startChild(script, config, { execArgv = [], logFile = '/dev/null', timeoutMs = 60_000 } = {}) {
  const out = openSync(logFile, 'a');
  const child = fork(script, [JSON.stringify(config)], { stdio: ['ignore', out, 'inherit', 'ipc'], execArgv });
  const ready = await new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`${script} not ready after ${timeoutMs} ms`)), timeoutMs);
    child.once('exit', (code, sig) => {
      clearTimeout(t);
      reject(new Error(`${script} exited (${code ?? sig}) before it was ready`));
    });
    child.on('message', (m) => {
      if (m?.type === 'ready') {
        clearTimeout(t);
        resolve(m);
      }
    });
  });
  const pending = [];
  child.on('message', (m) => {
    const i = pending.findIndex((p) => p.type === m?.type);
    if (i >= 0) pending.splice(i, 1)[0].resolve(m);
  });
  return {
    ...ready,
    child,
    pid: child.pid,
    /** Sends a request and waits for the reply of the same type. */
    ask(msg, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`no reply to ${msg.type}`)), timeoutMs);
        pending.push({
          type: msg.type,
          resolve: (m) => {
            clearTimeout(t);
            resolve(m);
          },
        });
        child.send(msg);
      });
    },
    /** CPU time the process has used so far, user and system, ms (from /proc: 10 ms ticks). */
    cpuMs() {
      const f = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1].split(' ');
      return (Number(f[11]) + Number(f[12])) * 10;
    },
    /** Memory of the process from /proc: { rssMB, hwmMB }. */
    memory() {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      const kb = (name) => Number((status.match(new RegExp(`^${name}:\\s+(\\d+)`, 'm')) ?? [])[1] ?? NaN);
      // RssFile: pages of files mapped into the process (code, and SQLite's mapped database pages),
      // the operating system's file cache, which it can drop; RssAnon: the process's own memory.
      return {
        rssMB: kb('VmRSS') / 1024,
        hwmMB: kb('VmHWM') / 1024,
        anonMB: kb('RssAnon') / 1024,
        fileMB: kb('RssFile') / 1024,
      };
    },
    async stop(timeoutMs = 15_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      try {
        child.send({ type: 'stop' });
      } catch {
        /* channel closed */
      }
      const done = await Promise.race([
        exited.then(() => true),
        new Promise((r) => setTimeout(() => r(false), timeoutMs)),
      ]);
      if (!done) {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}

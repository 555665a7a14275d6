// The benchmark suite: `npm run bench [-- --only create,query --duration 5 --engines sqlite]`.
//
// Every server under test runs in its own child process; the load generator (autocannon, or wrk
// for the stall test) runs beside it. This machine is shared and noisy, so every target is a
// ratio to a floor measured in the same run with the same generator and the same bodies:
//   (a) bare Fastify: JSON body + schema + one HMAC   (b) a + one SQLite insert (WAL, NORMAL)
//   (c) a + one PostgreSQL insert through a pg Pool of 10
// Floors are measured before and after the gateway runs; ratios use their mean.
// Nothing leaves 127.0.0.1: callback URLs point at a local receiver process.
import { spawnSync } from 'node:child_process';
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { measureFloor, neededFloors, stopFloors } from './lib/floors.mjs';
import { pgServer, setPgServer } from './lib/gateways.mjs';
import {
  ALL,
  CONNECTIONS,
  DURATION,
  ENGINES,
  LOG_LEVEL,
  RECEIVER,
  RUN,
  TMP,
  WARMUP,
  args,
  log,
  only,
  want,
} from './lib/options.mjs';
import { startPostgres } from './lib/postgres.mjs';
import { startChild } from './lib/procs.mjs';
import { setCallbackUrl } from './lib/requests.mjs';
import { extra, floorRuns, pick, printTable, rows } from './lib/results.mjs';
import { engineRuns } from './scenarios/api.mjs';
import { connectorRuns } from './scenarios/connectors.mjs';
import { booksRuns } from './scenarios/books.mjs';
import { consoleRuns } from './scenarios/console.mjs';
import { longPollRuns } from './scenarios/longpoll.mjs';
import { metricsRuns } from './scenarios/metrics.mjs';
import { notifyRuns } from './scenarios/notify.mjs';
import { notifyBusyRuns } from './scenarios/notify-busy.mjs';
import { profileRuns } from './scenarios/profile.mjs';
import { reconcileRuns } from './scenarios/reconcile.mjs';
import { scaleRuns } from './scenarios/scale.mjs';
import { stallRuns } from './scenarios/stalls.mjs';

// ---------------------------------------------------------------- main
function machine() {
  const cpu = cpus()[0]?.model ?? '?';
  return {
    nproc: cpus().length,
    cpu,
    node: process.version,
    load: (spawnSync('cat', ['/proc/loadavg'], { encoding: 'utf8' }).stdout ?? '').trim(),
  };
}

async function main() {
  const info = machine();
  log(`bench run ${RUN}: ${info.nproc} cpus (${info.cpu}), node ${info.node}, loadavg ${info.load}`);
  log(
    `scenarios: ${[...only].join(', ')}; engines: ${ENGINES.join(', ')}; ${DURATION} s runs after ${WARMUP} s warm-up, ${CONNECTIONS} connections; gateway log level ${LOG_LEVEL}`,
  );
  const needPg = ENGINES.includes('postgres') && (ALL.some((s) => s !== 'stalls' && want(s)) || want('profile'));
  if (needPg) {
    setPgServer(await startPostgres());
    log(`PostgreSQL started (${pgServer.adminUrl})`);
  }
  const receiver = await startChild(RECEIVER, {});
  setCallbackUrl(`${receiver.url}/notify`);
  const floors = neededFloors();
  try {
    if (want('floors')) for (const f of floors) await measureFloor(f, 'start');
    for (const engine of ENGINES) {
      if (['create', 'create-mh', 'gatewaydata', 'query', 'refund'].some(want)) await engineRuns(engine);
      if (want('notify')) await notifyRuns(engine, receiver);
      if (want('notify-busy')) await notifyBusyRuns(engine, receiver);
      if (want('longpoll')) await longPollRuns(engine);
      if (want('scale')) await scaleRuns(engine);
      if (want('connectors')) await connectorRuns(engine);
      if (want('console')) await consoleRuns(engine);
      if (want('books')) await booksRuns(engine);
      if (want('metrics')) await metricsRuns(engine);
      if (want('reconcile')) await reconcileRuns(engine);
    }
    if (want('stalls') && ENGINES.includes('sqlite')) await stallRuns();
    if (want('profile')) for (const engine of ENGINES) await profileRuns(engine);
    // Floors named by a row but not sampled yet (e.g. only create-mh was asked for), and a second
    // sample of every floor at the end of a full run.
    // A row may name a comparison that is not a floor (the metrics scenario's 'metrics off'): skipped.
    for (const f of new Set(rows.map((r) => r.floor).filter((f) => f in floorRuns)))
      if (!floorRuns[f].length) await measureFloor(f, 'end');
    if (want('floors') && !args['floors-once']) for (const f of floors) await measureFloor(f, 'end');
  } finally {
    await stopFloors();
    await receiver.stop();
    await pgServer?.stop();
  }
  printTable();
  const out = args.out ?? join(TMP, 'results.json');
  writeFileSync(
    out,
    JSON.stringify(
      {
        run: RUN,
        machine: info,
        args,
        rows,
        floors: Object.fromEntries(Object.entries(floorRuns).map(([k, v]) => [k, v.map(pick)])),
        extra: Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, { file: v.file }])),
      },
      null,
      2,
    ),
  );
  log(`results: ${out}`);
  // Keep the run directory small: databases are big after the scale test.
  for (const f of readdirSync(TMP))
    if (/\.db(-wal|-shm)?$/.test(f) || f.startsWith('bodies-')) rmSync(join(TMP, f), { force: true });
}

await main();
process.exit(0);

// The real gateway in its own process, started by bench/run.mjs with child_process.fork.
// argv[2] is a JSON config: { database, logLevel, merchant?, sqliteSynchronous?, masterKey?, accounts?, consolePassword?, metricsToken?, notify? }
// (consolePassword: an operator and the merchant's owner in the console, admin@ and owner@bench.example, with it)
// (accounts: channel accounts without wallet_id, set for the merchant's wallet of their currency; the gateway then runs live). Talks to the parent over IPC:
//   -> { type: 'ready', url, merchant, pid }      once listening, with the merchant's credentials
//   <- { type: 'waiting' }  -> { type: 'waiting', n }   long-poll waiters held right now
//   <- { type: 'memory' }   -> { type: 'memory', rss, heapTotal, heapUsed, external, arrayBuffers }
//   <- { type: 'cpu' }      -> { type: 'cpu', user, system }   the process's CPU time so far, in microseconds
//   <- { type: 'heapsnapshot', file } -> { type: 'heapsnapshot', file }   (v8.writeHeapSnapshot)
//   <- { type: 'eventloop' } -> { type: 'eventloop', maxMs, p99Ms }   the event loop's delay since the last ask, then reset
//   <- { type: 'profile-start' } -> { type: 'profile-start' }   a CPU profile (node:inspector) from now
//   <- { type: 'profile-stop', file } -> { type: 'profile-stop', file }   ... until now, written to file
//   <- { type: 'import-statement', wallet_id, method, date } -> { type: 'import-statement', ms, kind, lines, matched, exceptions, reason }
//   <- { type: 'stop' }     closes the gateway and exits 0 (so --cpu-prof writes its profile)
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { writeHeapSnapshot } from 'node:v8';
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
import { startGateway } from '../dist/src/server.js';
import { createMerchant, createWallet } from '../dist/src/cli/admin.js';
import { parseMasterKey } from '../dist/src/domain/sealed.js';
import { parseCidrList } from '../dist/src/notify/callback-safety.js';
import { setChannelAccount } from '../dist/src/usecases/channel-accounts.js';
import { inviteUser } from '../dist/src/usecases/console-auth.js';
import { hashPassword } from '../dist/src/domain/password.js';
import { importStatement } from '../dist/src/usecases/reconciliation.js';

const cfg = JSON.parse(process.argv[2] ?? '{}');
const masterKey = cfg.masterKey ? parseMasterKey(cfg.masterKey) : undefined;
const gw = await startGateway({
  port: 0,
  host: '127.0.0.1',
  database: cfg.database,
  logLevel: cfg.logLevel ?? 'info',
  mode: cfg.accounts ? 'live' : 'sandbox',
  ...(masterKey && { masterKey }),
  // Live mode delivers to public addresses only: the bench's receiver is on the loopback.
  // cfg.notify: notification settings (the notify-busy scenario turns delivery off, then on).
  notify: { ...cfg.notify, ...(cfg.accounts && { allowCidrs: parseCidrList('127.0.0.1/32') }) },
  ...(cfg.sqliteSynchronous && { sqliteSynchronous: cfg.sqliteSynchronous }),
  ...(cfg.metricsToken && { metricsToken: cfg.metricsToken }),
  // The statements' job would ask the fakes for days of their own: the reconcile scenario imports by hand.
  statementImport: false,
});

let merchant = cfg.merchant;
if (!merchant || !(await gw.store.accounts.findWallet(merchant.wallet_id))) {
  merchant = await createMerchant(gw.store, {
    name: 'Bench Merchant',
    currency: 'NZD',
    ...(merchant && { user_id: merchant.user_id, wallet_id: merchant.wallet_id, api_key: merchant.api_key }),
  });
  await gw.store.accounts.setRate('NZD', 'CNY', 4_644_300, Date.now());
}
// A provider that takes another currency than the merchant's first wallet (Azupay: AUD) gets a
// wallet of its currency, with the same API key; merchant.wallets names each wallet by currency.
merchant.wallets = {};
for (const w of await gw.store.accounts.listWallets(merchant.user_id)) merchant.wallets[w.currency] = w.wallet_id;
const first = (await gw.store.accounts.findWallet(merchant.wallet_id)).currency;
merchant.wallets[first] = merchant.wallet_id;
for (const account of cfg.accounts ?? []) {
  const currency = account.config.currency ?? first;
  if (!merchant.wallets[currency])
    merchant.wallets[currency] = (
      await createWallet(gw.store, { user_id: merchant.user_id, currency, api_key: merchant.api_key })
    ).wallet_id;
  const set = await setChannelAccount(
    gw.store.accounts,
    gw.ctx.connectors,
    masterKey,
    { ...account, wallet_id: merchant.wallets[currency] },
    Date.now(),
  );
  if (!set.ok) throw new Error(`channel account refused: ${set.problems.join('; ')}`);
  gw.ctx.credentials.clear();
}

// Console users for the console scenario: an operator and the merchant's owner, with this password.
let consoleUsers;
if (cfg.consolePassword) {
  consoleUsers = {};
  const org = (await gw.store.accounts.findUser(merchant.user_id)).organisation_id;
  for (const [kind, role, organisation_id] of [
    ['operator', 'admin', null],
    ['merchant', 'owner', org],
  ]) {
    const email = `${role}@bench.example`;
    let user = await gw.store.console.findUserByEmail(email);
    if (!user)
      user = (
        await inviteUser(
          { store: gw.store, now: Date.now, config: { publicUrl: gw.url } },
          { kind: 'cli', name: 'bench' },
          { email, kind, role, organisation_id },
        )
      ).user;
    await gw.store.console.setPassword(user.console_user_id, await hashPassword(cfg.consolePassword), Date.now());
    consoleUsers[kind] = email;
  }
}

// How long the event loop was kept from running (a stall inside the server), sampled every 10 ms.
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();

let profiler = null;
async function profileStart() {
  profiler = new Session();
  profiler.connect();
  await profiler.post('Profiler.enable');
  await profiler.post('Profiler.setSamplingInterval', { interval: 100 });
  await profiler.post('Profiler.start');
}
async function profileStop(file) {
  const { profile } = await profiler.post('Profiler.stop');
  writeFileSync(file, JSON.stringify(profile));
  profiler.disconnect();
  profiler = null;
}

/** A provider's statement of a day imported as the job imports it (fetched, matched, saved, pending asked). */
async function importNow({ wallet_id, method, date }) {
  const t0 = performance.now();
  try {
    const r = await importStatement(gw.ctx, { wallet_id, method, date, by: 'bench' });
    const s = r.statement;
    process.send({
      type: 'import-statement',
      ms: performance.now() - t0,
      kind: r.kind,
      ...(s && { lines: s.line_count, matched: s.matched_count, exceptions: s.exception_count }),
      ...(r.kind === 'not_ready' && { reason: r.reason }),
    });
  } catch (e) {
    process.send({
      type: 'import-statement',
      ms: performance.now() - t0,
      kind: 'error',
      reason: String(e?.stack ?? e),
    });
  }
}

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  const hard = setTimeout(() => process.exit(0), 5000);
  try {
    await gw.close();
  } catch {
    /* exiting anyway */
  }
  clearTimeout(hard);
  process.exit(0);
}
process.on('message', (m) => {
  if (m?.type === 'waiting') process.send({ type: 'waiting', n: gw.ctx.signals.waiting });
  else if (m?.type === 'memory') process.send({ type: 'memory', ...process.memoryUsage() });
  else if (m?.type === 'cpu') process.send({ type: 'cpu', ...process.cpuUsage() });
  else if (m?.type === 'heapsnapshot') {
    globalThis.gc?.();
    process.send({ type: 'heapsnapshot', file: writeHeapSnapshot(m.file) });
  } else if (m?.type === 'eventloop') {
    process.send({ type: 'eventloop', maxMs: loopDelay.max / 1e6, p99Ms: loopDelay.percentile(99) / 1e6 });
    loopDelay.reset();
  } else if (m?.type === 'profile-start') void profileStart().then(() => process.send({ type: 'profile-start' }));
  else if (m?.type === 'profile-stop')
    void profileStop(m.file).then(() => process.send({ type: 'profile-stop', file: m.file }));
  else if (m?.type === 'import-statement') void importNow(m);
  else if (m?.type === 'stop') void stop();
});
process.on('SIGTERM', () => void stop());
process.on('disconnect', () => void stop());
process.send({ type: 'ready', url: gw.url, merchant, pid: process.pid, consoleUsers });

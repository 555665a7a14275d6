// The bench's options (`npm run bench -- --help`), the run's folder, and small helpers every part uses.
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

export const HERE = join(dirname(fileURLToPath(import.meta.url)), '..');
export const ROOT = join(HERE, '..');
export const GATEWAY = join(HERE, 'gateway-server.mjs');
export const FAKE_PROVIDERS = join(HERE, 'fake-providers.mjs');
export const FLOOR = join(HERE, 'floors', 'floor-server.mjs');
export const CONNECTOR_FLOOR = join(HERE, 'floors', 'connector-floor.mjs');
export const RECEIVER = join(HERE, 'receiver.mjs');
export const POLL_CLIENT = join(HERE, 'poll-client.mjs');

export const ALL = [
  'floors',
  'create',
  'create-mh',
  'gatewaydata',
  'query',
  'refund',
  'notify',
  'notify-busy',
  'longpoll',
  'scale',
  'stalls',
  'connectors',
  'console',
  'books',
  'metrics',
  'reconcile',
];
export const { values: args } = parseArgs({
  options: {
    only: { type: 'string' },
    engines: { type: 'string', default: 'sqlite,postgres' },
    duration: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '3' },
    'notify-rate': { type: 'string', default: '20' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '50' },
    longpolls: { type: 'string', default: '10000' },
    'scale-rows': { type: 'string', default: '1000000' },
    'statement-lines': { type: 'string', default: '100000' },
    'log-level': { type: 'string', default: 'info' },
    'provider-delay': { type: 'string', default: '200' },
    'floors-once': { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
    out: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (args.help) {
  console.log(`npm run bench -- [--only ${ALL.join(',')},profile] [--engines sqlite,postgres] [--duration S] [--warmup S]
  [--connections N] [--rounds N] [--notify-rate PAYS_PER_S] [--longpolls N] [--scale-rows N] [--statement-lines N] [--log-level info|silent] [--provider-delay MS] [--floors-once] [--profile] [--out FILE.json]`);
  process.exit(0);
}
export const only = new Set(
  (args.only ?? ALL.join(','))
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
);
if (args.profile) only.add('profile');
for (const s of only)
  if (![...ALL, 'profile'].includes(s)) throw new Error(`unknown scenario ${s}; known: ${ALL.join(', ')}, profile`);
export const ENGINES = args.engines
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
export const DURATION = Number(args.duration);
export const WARMUP = Number(args.warmup);
export const ROUNDS = Math.max(1, Number(args.rounds));
export const NOTIFY_RATE = Number(args['notify-rate']);
export const CONNECTIONS = Number(args.connections);
export const LONGPOLLS = Number(args['longpolls']);
export const SCALE_ROWS = Number(args['scale-rows']);
export const STATEMENT_LINES = Number(args['statement-lines']);
export const LOG_LEVEL = args['log-level'];
export const PROVIDER_DELAY_MS = Number(args['provider-delay']);
export const want = (s) => only.has(s);

export const RUN = Date.now().toString(36);
export const TMP = join(ROOT, '.tmp', 'bench', RUN);
mkdirSync(TMP, { recursive: true });

export const now = () => performance.timeOrigin + performance.now();
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export const log = (...a) => console.log(`[${new Date().toISOString().slice(11, 19)}]`, ...a);
export const loadavg = () =>
  (spawnSync('cat', ['/proc/loadavg'], { encoding: 'utf8' }).stdout ?? '').split(' ').slice(0, 3).join(' ');

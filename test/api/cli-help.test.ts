// Every command of the built CLI answers --help (and `gateway help <command>`) from its own flag
// table: its flags, their defaults and environment variables, and an example. A mistake names the
// closest command or flag.
import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';
import { format } from 'node:util';
import { describe, expect, it, vi } from 'vitest';
import { COMMANDS, main } from '../../src/cli/main.js';

const ROOT = resolve(import.meta.dirname, '../..');
const BIN = join(ROOT, 'bin/gateway.js');

function gateway(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(process.execPath, [BIN, ...args], { cwd: ROOT, timeout: 20_000 }, (err, stdout, stderr) => {
      done({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

/**
 * The CLI's `main` in this process, its console output captured: what the binary prints, without
 * starting a process per command (the binary itself is run for a few of them below).
 */
async function inProcess(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void out.push(`${format(...a)}\n`));
  const error = vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void err.push(`${format(...a)}\n`));
  try {
    const code = await main(args);
    return { code, stdout: out.join(''), stderr: err.join('') };
  } finally {
    log.mockRestore();
    error.mockRestore();
  }
}

describe('gateway --help', () => {
  it('lists every command with its summary', async () => {
    const r = await gateway('help');
    expect(r.code).toBe(0);
    for (const c of COMMANDS) expect(r.stdout).toContain(`  ${c.name}`);
    expect(r.stdout).toBe((await gateway('--help')).stdout);
  });

  it.each(COMMANDS.map((c) => [c.name, c] as const))(
    '%s --help: its flags, defaults, variables and an example',
    async (name, command) => {
      const words = name.split(' ');
      const r = await inProcess(...words, '--help');
      expect(r.code).toBe(0);
      expect(r.stderr).toBe('');
      expect(r.stdout.startsWith(`gateway ${name}: ${command.summary}\n`)).toBe(true);
      // A flag's help may wrap onto a second line.
      const flat = r.stdout.replace(/\s+/g, ' ');
      for (const f of command.flags) {
        expect(r.stdout).toContain(`--${f.name}${f.type === 'string' ? ' ' : ''}`);
        if (f.env) expect(flat).toContain(`env ${f.env}`);
        if (f.default !== undefined) expect(flat).toContain(`default ${f.default}`);
      }
      for (const e of command.environment ?? []) expect(r.stdout).toContain(e.name);
      expect(r.stdout).toMatch(/\nExamples?:\n {2}gateway /);
      expect(command.examples.every((x) => x.includes(`gateway ${name}`))).toBe(true);
      // The same from `gateway help <command>` and from -h.
      expect((await inProcess('help', ...words)).stdout).toBe(r.stdout);
      expect((await inProcess(...words, '-h')).stdout).toBe(r.stdout);
    },
  );

  it('the binary prints what main prints, for a command of each kind', async () => {
    for (const words of [['serve'], ['statements', 'import'], ['payout', 'batch']]) {
      const r = await gateway(...words, '--help');
      expect(r).toMatchObject({ code: 0, stderr: '' });
      expect(r.stdout).toBe((await inProcess(...words, '--help')).stdout);
      expect((await gateway('help', ...words)).stdout).toBe(r.stdout);
    }
  });

  it("channel set's help has both providers' flags, the JSAPI ones among them", async () => {
    const r = await gateway('channel', 'set', '--help');
    expect(r.stdout).toContain('Options (Alipay, --provider alipay):');
    expect(r.stdout).toContain('Options (WeChat Pay, --provider wechatpay):');
    for (const flag of [
      '--jsapi on|off',
      '--appsecret-file FILE',
      '--oauth-endpoint URL',
      '--alipay-root-cert-file CRT',
    ])
      expect(r.stdout).toContain(flag);
  });

  it("serve's help lists every variable it reads, with the defaults the gateway uses", async () => {
    const flat = (await gateway('serve', '--help')).stdout.replace(/\s+/g, ' ');
    expect(flat).toContain('NONCE_TTL_MS how long a nonce stays usable (default 1800000)');
    expect(flat).toMatch(/NOTIFY_RETRY_SCHEDULE_MS [^A-Z]*\(default 30000\)/);
    expect(flat).toMatch(/RETENTION_INTERVAL_MS [^A-Z]*\(default 3600000\)/);
  });

  it('a group answers with its commands', async () => {
    const r = await gateway('wallet', '--help');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('wallet create');
    expect(r.stdout).toContain('wallet disable');
    expect(r.stdout).not.toMatch(/^ {2}channel set/m);
  });
});

describe('gateway mistakes name the closest', () => {
  it.each([
    [
      ['merchant', 'create', '--nme', 'X'],
      /^gateway: unknown option --nme for merchant create; did you mean --name\? \(gateway merchant create --help\)\n$/,
    ],
    [['channel', 'set', '--wallet', 'W1'], /did you mean --wallet-id\?/],
    [['channel', 'set', '--private-key', 'k.pem'], /did you mean --private-key-file\?/],
    [['serve', '--prot', '80'], /did you mean --port\?/],
    [['walet', 'create'], /^gateway: unknown command walet; did you mean wallet\? \(gateway help\)\n$/],
    [['wallet', 'creat'], /^gateway: unknown command wallet creat; did you mean wallet create\?/],
    [['wallet', 'delete'], /^gateway: unknown command wallet delete; wallet has create, update, disable, enable/],
    [['channel'], /^gateway: channel needs a subcommand: set, list, remove, test/],
    [
      ['merchant', 'create', '--zzzzzzzz'],
      /^gateway: unknown option --zzzzzzzz for merchant create \(gateway merchant create --help\)\n$/,
    ],
    [['merchant', 'create', '--currency', 'NZD'], /^gateway: --name is required \(gateway merchant create --help\)\n$/],
    [['wallet', 'update', 'W1'], /^gateway: unexpected argument W1 for wallet update/],
  ])('%j', async (args, message) => {
    const r = await gateway(...args);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(message);
  });
});

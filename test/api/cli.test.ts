// The built `gateway` CLI (bin/gateway.js, after `npm run build`) as a child process against a
// temporary SQLite file; its effects are checked through a real server on the same file.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hmacSha256Hex, signRequest } from '../../sdk/signing.js';
import { startGateway, type RunningGateway } from '../../src/server.js';

const ROOT = resolve(import.meta.dirname, '../..');
const BIN = join(ROOT, 'bin/gateway.js');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function gateway(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { cwd: ROOT, env: { ...process.env, DATABASE_URL: '', ...env }, timeout: 20_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        done({ code, stdout, stderr });
      },
    );
  });
}

describe('gateway CLI', () => {
  let dir: string;
  let db: string;
  let server: RunningGateway | undefined;
  const cli = (...args: string[]) => gateway([...args, '--database', db]);
  const json = async (...args: string[]) => {
    const r = await cli(...args, '--json');
    expect(r, r.stderr).toMatchObject({ code: 0, stderr: '' });
    return JSON.parse(r.stdout) as Record<string, string>;
  };

  beforeAll(() => {
    if (!existsSync(join(ROOT, 'dist/src/cli/main.js')))
      throw new Error('the CLI is not built: run `npm run build` (npm test does)');
    dir = mkdtempSync(join(tmpdir(), 'gw-cli-'));
    db = join(dir, 'gateway.db');
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A server on the CLI's database file, started once the CLI has made the merchants. */
  async function serve(): Promise<RunningGateway> {
    server ??= await startGateway({ port: 0, host: '127.0.0.1', database: db, logLevel: 'silent' });
    return server;
  }
  async function create(fields: Record<string, string>, apiKey: string): Promise<any> {
    const gw = await serve();
    const body = {
      payment_method: 'alipay',
      amount: '120.00',
      return_url: 'https://merchantsite.com/checkout',
      callback_url: 'https://merchantsite.com/confirm',
      merchant_reference: `cli-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`,
      ip: '122.122.122.1',
      version: '2.0',
      product_name: 'Pinot Noir, Otago',
      ...fields,
    };
    const res = await fetch(`${gw.url}/v2/transaction`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...body, signature: signRequest(body, apiKey) }),
    });
    return res.json();
  }

  let random: Record<string, string>;
  let imported: Record<string, string>;
  let audWallet: Record<string, string>;
  let overlappedKey = '';
  let rotatedKey: string;

  it('migrate brings a new database file up to date', async () => {
    expect(await cli('migrate')).toMatchObject({ code: 0, stdout: 'database schema is up to date\n', stderr: '' });
  });

  it('merchant create --json prints the three credentials', async () => {
    random = await json('merchant', 'create', '--name', 'Otago Wines', '--currency', 'nzd');
    expect(random).toMatchObject({
      organisation_name: 'Otago Wines',
      user_id: expect.stringMatching(/^U\d{9}$/),
      wallet_id: expect.stringMatching(/^W\d{17}$/),
      api_key: expect.stringMatching(/^[0-9A-F]{32}$/),
      currency: 'NZD',
    });
  });

  it('merchant create imports given ids and key unchanged', async () => {
    imported = await json(
      'merchant',
      'create',
      '--name',
      'Imported',
      '--currency',
      'NZD',
      '--user-id',
      'U000334333',
      '--wallet-id',
      'W00000001',
      '--api-key',
      '111222333',
    );
    expect(imported).toMatchObject({
      user_id: 'U000334333',
      wallet_id: 'W00000001',
      api_key: '111222333',
      currency: 'NZD',
    });
  });

  it('without --json prints one credential per line', async () => {
    const r = await cli('merchant', 'create', '--name', 'Plain', '--currency', 'AUD');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^user_id\s+U\d{9}$/m);
    expect(r.stdout).toMatch(/^api_key\s+[0-9A-F]{32}$/m);
  });

  it('wallet create adds a wallet with limited methods to a user', async () => {
    audWallet = await json(
      'wallet',
      'create',
      '--user-id',
      'U000334333',
      '--currency',
      'AUD',
      '--methods',
      'alipay,wechat',
    );
    expect(audWallet).toMatchObject({
      user_id: 'U000334333',
      wallet_id: expect.stringMatching(/^W\d{17}$/),
      currency: 'AUD',
    });
  });

  it('key rotate prints a new key, and until when the old one verifies (24 h unless --overlap-hours says otherwise)', async () => {
    const before = Date.now();
    const r = await json('key', 'rotate', '--wallet-id', random.wallet_id);
    expect(r.wallet_id).toBe(random.wallet_id);
    expect(r.api_key).toMatch(/^[0-9A-F]{32}$/);
    expect(r.api_key).not.toBe(random.api_key);
    const until = Date.parse(r.previous_key_valid_until);
    expect(until).toBeGreaterThanOrEqual(before + 24 * 3600_000);
    expect(until).toBeLessThan(Date.now() + 24 * 3600_000 + 1000);
    overlappedKey = r.api_key!;
    // A key that was exposed: no overlap.
    const now = await json('key', 'rotate', '--wallet-id', random.wallet_id, '--overlap-hours', '0');
    expect(now.previous_key_valid_until).toBe('now');
    rotatedKey = now.api_key!;
    expect(await cli('key', 'rotate', '--wallet-id', random.wallet_id, '--overlap-hours', '1000')).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--overlap-hours'),
    });
  });

  it("a closed organisation's wallet and API user are not enabled again", async () => {
    const shop = await json('merchant', 'create', '--name', 'Gone Away Ltd', '--currency', 'nzd');
    const store = (await serve()).store;
    const owner = (await store.accounts.findUser(shop.user_id))!;
    expect(await store.accounts.closeOrganisation(owner.organisation_id, Date.now())).toBe(true);
    await cli('wallet', 'disable', '--wallet-id', shop.wallet_id);
    const wallet = await cli('wallet', 'enable', '--wallet-id', shop.wallet_id);
    expect(wallet.code).toBe(2);
    expect(wallet.stderr).toContain(`organisation ${owner.organisation_id} is closed`);
    expect((await store.accounts.findWallet(shop.wallet_id))!.wallet_status).toBe('disabled');
    await cli('user', 'disable', '--user-id', shop.user_id);
    expect((await cli('user', 'enable', '--user-id', shop.user_id)).code).toBe(2);
    expect((await store.accounts.findUser(shop.user_id))!.user_status).toBe('disabled');
  });

  it('user disable, wallet disable and enable, and rates set', async () => {
    expect(await cli('wallet', 'disable', '--wallet-id', random.wallet_id)).toMatchObject({
      code: 0,
      stdout: `wallet ${random.wallet_id} disabled\n`,
    });
    expect(await cli('wallet', 'enable', '--wallet-id', random.wallet_id)).toMatchObject({
      code: 0,
      stdout: `wallet ${random.wallet_id} enabled\n`,
    });
    expect(await cli('user', 'disable', '--user-id', random.user_id)).toMatchObject({
      code: 0,
      stdout: `user ${random.user_id} disabled\n`,
    });
    expect(await cli('rates', 'set', '--from', 'NZD', '--to', 'CNY', '--rate', '5')).toMatchObject({
      code: 0,
      stdout: 'rate NZD -> CNY set to 5\n',
    });
    // More than 10 % from the last: nothing set until confirmed; only a wallet's currency to CNY.
    const far = await cli('rates', 'set', '--from', 'NZD', '--to', 'CNY', '--rate', '6');
    expect(far.code).toBe(1);
    expect(far.stderr).toContain(
      '6 is 20.0 % from the last NZD -> CNY rate (5); nothing set: run again with --confirm',
    );
    expect(await cli('rates', 'set', '--from', 'NZD', '--to', 'CNY', '--rate', '6', '--confirm')).toMatchObject({
      code: 0,
      stdout: 'rate NZD -> CNY set to 6\n',
    });
    expect((await cli('rates', 'set', '--from', 'NZD', '--to', 'CNY', '--rate', '5', '--confirm')).code).toBe(0);
    for (const [from, to] of [
      ['CNY', 'CNY'],
      ['NZD', 'AUD'],
    ])
      expect((await cli('rates', 'set', '--from', from, '--to', to, '--rate', '1')).stderr).toContain(
        `a rate is from a wallet's currency to CNY (what a domestic account charges), not ${from} -> ${to}`,
      );
  });

  it('the server sees it all: imported credentials accept the published request vector as is', async () => {
    const gw = await serve();
    const published = {
      user_id: 'U000334333',
      wallet_id: 'W00000001',
      payment_method: 'alipay',
      amount: '120.00',
      return_url: 'https://merchantsite.com/checkout',
      callback_url: 'https://merchantsite.com/confirm',
      merchant_reference: 'dsi39ej430sks03',
      ip: '122.122.122.1',
      version: '2.0',
      product_name: 'Pinot Noir, Otago',
      signature: '8d1bea078eaacdae8388852851ec39e2e8561cdce64f359421d85ed4844496ec',
    };
    const res = await fetch(`${gw.url}/v2/transaction`, {
      method: 'POST',
      headers: { 'content-type': 'application/json;charset=UTF-8' },
      body: JSON.stringify(published),
    });
    expect(await res.json()).toMatchObject({ code: 0, message: 'SUCCESS' });
  });

  it('the server sees it all: the disabled user answers 205 until enabled; the old key then 206', async () => {
    const ids = { user_id: random.user_id, wallet_id: random.wallet_id };
    expect(await create(ids, rotatedKey)).toMatchObject({ code: 205 });
    expect(await cli('user', 'enable', '--user-id', random.user_id)).toMatchObject({
      code: 0,
      stdout: `user ${random.user_id} enabled\n`,
    });
    expect(await create(ids, random.api_key)).toMatchObject({ code: 206 });
    expect(await create(ids, overlappedKey)).toMatchObject({ code: 206 });
    expect(await create(ids, rotatedKey)).toMatchObject({ code: 0 });
  });

  it('the server sees it all: wallet methods and the rate', async () => {
    const aud = { user_id: 'U000334333', wallet_id: audWallet.wallet_id };
    expect(await create({ ...aud, payment_method: 'polipay' }, audWallet.api_key)).toMatchObject({ code: 304 });
    const hosted = await create({ user_id: 'U000334333', wallet_id: 'W00000001', host_type: '1' }, '111222333');
    const data = await (await fetch(`${hosted.host_url}/${hosted.nonce}`)).json();
    expect(data.data).toMatchObject({ amount: '120.00', amount_cny: '600.00', currency_rate: '5.000000' });
  });

  it('wallet update turns the legacy create signature off and on, and changes methods and name; the server follows at once', async () => {
    const gw = await serve();
    const legacy = (apiKey: string) => {
      const body: Record<string, string> = {
        user_id: 'U000334333',
        wallet_id: 'W00000001',
        amount: '1.00',
        payment_method: 'alipay',
        return_url: 'https://shop.example/r',
        callback_url: 'https://shop.example/n',
        merchant_reference: `cli-legacy-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`,
        ip: '122.122.122.1',
        version: '2.0',
        product_name: 'Order #7',
      };
      body.signature = hmacSha256Hex(
        apiKey,
        body.user_id + body.wallet_id + body.amount + body.payment_method + body.return_url + body.callback_url,
      );
      return fetch(`${gw.url}/v2/transaction`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then((r) => r.json());
    };
    expect(await legacy('111222333')).toMatchObject({ code: 0 });
    expect(await json('wallet', 'update', '--wallet-id', 'W00000001', '--legacy-signatures', 'off')).toEqual({
      wallet_id: 'W00000001',
      user_id: 'U000334333',
      wallet_name: 'Imported NZD',
      currency: 'NZD',
      payment_methods: 'wechat,alipay,moneymore,polipay,payid,upi_upop,coin_payments',
      legacy_signatures: 'off',
    });
    expect(await legacy('111222333')).toMatchObject({ code: 206 });
    const plain = await cli(
      'wallet',
      'update',
      '--wallet-id',
      'W00000001',
      '--legacy-signatures',
      'on',
      '--methods',
      'alipay, wechat',
      '--name',
      'Shop NZD',
    );
    expect(plain.code).toBe(0);
    expect(plain.stdout).toMatch(/^legacy_signatures\s+on$/m);
    expect(plain.stdout).toMatch(/^payment_methods\s+alipay,wechat$/m);
    expect(plain.stdout).toMatch(/^wallet_name\s+Shop NZD$/m);
    expect(await legacy('111222333')).toMatchObject({ code: 0 });
    const detail = await fetch(`${gw.url}/v2/detail/W00000001?user_id=U000334333`).then((r) => r.json());
    expect(detail).toEqual({ code: 0, message: 'SUCCESS', payment_method: 'Alipay,Wechat' });
    expect(plain.stdout).not.toContain('111222333');
  });

  it('wallet create and merchant create take --legacy-signatures off', async () => {
    const gw = await serve();
    const m = await json('merchant', 'create', '--name', 'Strict', '--currency', 'NZD', '--legacy-signatures', 'off');
    const w = await json('wallet', 'create', '--user-id', m.user_id, '--currency', 'AUD', '--legacy-signatures', 'off');
    for (const id of [m.wallet_id, w.wallet_id])
      expect((await gw.store.accounts.findWallet(id))?.legacy_signatures).toBe(0);
  });

  it('every administrative command leaves an audit entry (never a key), and operator create prints a one-time link', async () => {
    const gw = await serve();
    const op = await json(
      'operator',
      'create',
      '--email',
      'Ops@Example.com',
      '--public-url',
      'https://pay.example.com',
    );
    expect(op).toMatchObject({ email: 'ops@example.com', kind: 'operator', role: 'admin' });
    expect(op.link).toMatch(/^https:\/\/pay\.example\.com\/console\/welcome\/[\w-]{43}$/);
    const again = await cli('operator', 'create', '--email', 'ops@example.com');
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('already has a console account');
    const entries = await gw.store.console.listAudit({ limit: 200 });
    const actions = new Set(entries.map((e) => e.action));
    for (const action of [
      'cli.merchant.create',
      'cli.wallet.create',
      'cli.wallet.update',
      'cli.key.rotate',
      'cli.rates.set',
      'user.invite',
    ])
      expect(actions, action).toContain(action);
    for (const e of entries) {
      expect(e.actor_kind).toBe('cli');
      expect(e.actor).toMatch(/^cli:/);
    }
    // The imported merchant's key and the rotated key are nowhere in it.
    const text = JSON.stringify(entries);
    expect(text).not.toContain(rotatedKey);
    expect(text).not.toContain(imported.api_key);
    const update = entries.find((e) => e.action === 'cli.wallet.update')!;
    expect(JSON.parse(update.before!)).toHaveProperty('legacy_signatures');
    expect(JSON.parse(update.after!)).toHaveProperty('legacy_signatures');
  });

  describe('mistakes: one line on stderr and a non-zero exit', () => {
    it.each([
      ['an unknown command', ['frobnicate'], 2],
      ['an unknown subcommand', ['merchant', 'delete'], 2],
      ['a missing --name', ['merchant', 'create', '--currency', 'NZD'], 2],
      ['a missing --currency', ['merchant', 'create', '--name', 'X'], 2],
      ['an unknown option', ['merchant', 'create', '--name', 'X', '--currency', 'NZD', '--bogus'], 2],
      ['an unsupported currency', ['merchant', 'create', '--name', 'X', '--currency', 'XYZ'], 2],
      ['a bad imported id', ['merchant', 'create', '--name', 'X', '--currency', 'NZD', '--user-id', 'U 1'], 2],
      ['a short imported key', ['merchant', 'create', '--name', 'X', '--currency', 'NZD', '--api-key', 'abc'], 2],
      ['an existing user id', ['merchant', 'create', '--name', 'X', '--currency', 'NZD', '--user-id', 'U000334333'], 2],
      ['a wallet for an unknown user', ['wallet', 'create', '--user-id', 'U404', '--currency', 'AUD'], 2],
      [
        'an unknown method',
        ['wallet', 'create', '--user-id', 'U000334333', '--currency', 'AUD', '--methods', 'alipay,cash'],
        2,
      ],
      ['rotating an unknown wallet', ['key', 'rotate', '--wallet-id', 'W404'], 2],
      ['disabling an unknown user', ['user', 'disable', '--user-id', 'U404'], 2],
      ['disabling an unknown wallet', ['wallet', 'disable', '--wallet-id', 'W404'], 2],
      ['a bad rate', ['rates', 'set', '--from', 'NZD', '--to', 'CNY', '--rate', 'abc'], 2],
      ['a zero rate', ['rates', 'set', '--from', 'NZD', '--to', 'CNY', '--rate', '0'], 2],
      ['a bad port', ['serve', '--port', 'eighty'], 2],
      ['a bad mode', ['serve', '--mode', 'production'], 2],
      [
        'a legacy switch that is not on or off',
        ['wallet', 'update', '--wallet-id', 'W00000001', '--legacy-signatures', 'yes'],
        2,
      ],
      [
        'a legacy switch on create that is not on or off',
        ['merchant', 'create', '--name', 'X', '--currency', 'NZD', '--legacy-signatures', '1'],
        2,
      ],
      ['a wallet update that changes nothing', ['wallet', 'update', '--wallet-id', 'W00000001'], 2],
      ['updating an unknown wallet', ['wallet', 'update', '--wallet-id', 'W404', '--legacy-signatures', 'off'], 2],
      [
        'updating a wallet to an unknown method',
        ['wallet', 'update', '--wallet-id', 'W00000001', '--methods', 'alipay,cash'],
        2,
      ],
      [
        'updating a wallet to a method twice',
        ['wallet', 'update', '--wallet-id', 'W00000001', '--methods', 'alipay,alipay'],
        2,
      ],
      ['updating a wallet to an empty name', ['wallet', 'update', '--wallet-id', 'W00000001', '--name', ' '], 2],
    ])('%s', async (_what, args, code) => {
      const r = await cli(...args);
      expect(r.code).toBe(code);
      expect(r.stderr).toMatch(/^gateway: [^\n]+\n$/);
      expect(r.stdout).toBe('');
    });

    it('a SQLITE_SYNCHRONOUS other than full or normal exits 2 before opening the database', async () => {
      const r = await gateway(['serve', '--port', '0', '--database', join(dir, 'never.db')], {
        SQLITE_SYNCHRONOUS: 'off',
      });
      expect(r.code).toBe(2);
      expect(r.stderr).toBe('gateway: SQLITE_SYNCHRONOUS must be full or normal, not off\n');
      expect(existsSync(join(dir, 'never.db'))).toBe(false);
    });

    it.each(['NONCE_TTL_MS', 'LONG_POLL_TIMEOUT_MS', 'CANCEL_LOCK_MS', 'CREDENTIAL_CACHE_MS', 'REFUND_WAIT_MS'])(
      '%s that is not a whole number exits 2 before opening the database',
      async (name) => {
        const r = await gateway(['serve', '--port', '0', '--database', join(dir, 'never.db')], { [name]: '30s' });
        expect(r.code).toBe(2);
        expect(r.stderr).toBe(`gateway: ${name} must be a whole number, not 30s\n`);
        expect(existsSync(join(dir, 'never.db'))).toBe(false);
      },
    );

    it('no command prints the usage and exits 2', async () => {
      const r = await gateway([]);
      expect(r.code).toBe(2);
      expect(r.stdout).toMatch(/^Usage: gateway <command>/);
    });

    it('a database that cannot be opened exits 1 with one line', async () => {
      writeFileSync(join(dir, 'a-file'), '');
      const r = await gateway(['migrate', '--database', join(dir, 'a-file', 'x.db')]);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/^gateway: [^\n]+\n$/);
    });
  });
});

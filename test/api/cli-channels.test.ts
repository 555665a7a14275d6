// `gateway channel set|list|test|remove` as an operator runs them (the built CLI, a child process,
// a temporary SQLite file), against the fake providers: secrets sealed under the master key and
// never printed, keys as PEM or bare base64, a signed probe that proves the keys, a server that
// refuses to start without the right master key, and live payments through the account set.
import { execFile } from 'node:child_process';
import { createPrivateKey, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signRequest } from '../../sdk/signing.js';
import { parseMasterKey } from '../../src/domain/sealed.js';
import { startGateway } from '../../src/server.js';
import { FakeAlipay } from '../support/fake-alipay.js';
import { keyPair } from '../support/fake-server.js';
import { FakeWechatPay } from '../support/fake-wechatpay.js';
import { FakeAzupay } from '../support/fake-azupay.js';
import { FakeCoinPayments } from '../support/fake-coinpayments.js';
import { FakePoli } from '../support/fake-poli.js';
import { FakeUnionpay } from '../support/fake-unionpay.js';

const ROOT = resolve(import.meta.dirname, '../..');
const BIN = join(ROOT, 'bin/gateway.js');
const MASTER = randomBytes(32).toString('base64');

function run(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      {
        cwd: ROOT,
        env: { ...process.env, DATABASE_URL: '', GATEWAY_MASTER_KEY: '', GATEWAY_MASTER_KEY_FILE: '', ...env },
        timeout: 20_000,
      },
      (err, stdout, stderr) => {
        done({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
      },
    );
  });
}

describe('gateway channel', () => {
  let dir: string;
  let db: string;
  let alipay: FakeAlipay;
  let wechat: FakeWechatPay;
  let merchant: Record<string, string>;
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  const cli = (args: string[], env: Record<string, string> = { GATEWAY_MASTER_KEY: MASTER }) =>
    run([...args, '--database', db], env);
  let alipayArgs: string[];

  beforeAll(async () => {
    if (!existsSync(join(ROOT, 'dist/src/cli/main.js')))
      throw new Error('the CLI is not built: run `npm run build` (npm test does)');
    dir = mkdtempSync(join(tmpdir(), 'gw-channel-'));
    db = join(dir, 'gateway.db');
    [alipay, wechat] = await Promise.all([FakeAlipay.start(), FakeWechatPay.start()]);
    const made = await run([
      'merchant',
      'create',
      '--name',
      'Otago Wines',
      '--currency',
      'NZD',
      '--json',
      '--database',
      db,
    ]);
    merchant = JSON.parse(made.stdout) as Record<string, string>;
    await run(['rates', 'set', '--from', 'NZD', '--to', 'CNY', '--rate', '4.6443', '--database', db]);
    // Alipay's key tool hands out keys as one line of base64: taken as they are.
    const bare = (pem: string) => pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');
    alipayArgs = [
      'channel',
      'set',
      '--wallet-id',
      merchant.wallet_id,
      '--method',
      'alipay',
      '--provider',
      'alipay',
      '--app-id',
      alipay.app_id,
      '--private-key-file',
      file('app_private_key.txt', bare(alipay.app.privateKey)),
      '--alipay-public-key-file',
      file('alipay_public_key.txt', bare(alipay.alipay.publicKey)),
      '--endpoint',
      alipay.endpoint,
    ];
  });
  afterAll(async () => {
    await Promise.all([alipay?.close(), wechat?.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('set needs the master key, and refuses keys that are not keys', async () => {
    expect(await cli(alipayArgs, {})).toMatchObject({ code: 2, stderr: expect.stringMatching(/GATEWAY_MASTER_KEY/) });
    const notAKey = alipayArgs.map((a, i) =>
      alipayArgs[i - 1] === '--private-key-file' ? file('junk.pem', 'hello') : a,
    );
    expect(await cli(notAKey)).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/--private-key-file: not an RSA private key/),
    });
    expect(await cli([...alipayArgs, '--currency-mode', 'offshore'])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/--currency-mode must be domestic or cross-border/),
    });
    expect(
      await cli(alipayArgs.map((a) => (a === alipay.endpoint ? 'http://example.com/gateway.do' : a))),
    ).toMatchObject({ code: 2, stderr: expect.stringMatching(/must be https/) });
  });

  it('set seals the secrets, prints the notification address to give Alipay, and list shows only fingerprints', async () => {
    const set = await cli(alipayArgs, { GATEWAY_MASTER_KEY: MASTER, PUBLIC_URL: 'https://pay.example.com' });
    expect(set, set.stderr).toMatchObject({ code: 0 });
    expect(set.stdout).toContain(
      'Alipay notifies this address (sent with every payment; it must reach this gateway over HTTPS): https://pay.example.com/channels/alipay/notify',
    );
    const list = await cli(['channel', 'list', '--json']);
    const [row] = JSON.parse(list.stdout) as Array<Record<string, string>>;
    expect(row).toMatchObject({
      wallet_id: merchant.wallet_id,
      payment_method: 'alipay',
      provider: 'alipay',
      app_id: alipay.app_id,
      private_key: expect.stringMatching(/^sealed \(sha256 [0-9a-f]{16}\)$/),
    });
    const secret = createPrivateKey(alipay.app.privateKey)
      .export({ type: 'pkcs8', format: 'der' })
      .toString('base64')
      .slice(40, 120);
    expect(list.stdout).not.toContain(secret);
    expect(readFileSync(db).toString('latin1')).not.toContain(secret);

    // Another wallet's account sealed under another key would stop the gateway starting: refused.
    const second = JSON.parse(
      (await run(['merchant', 'create', '--name', 'Second Shop', '--currency', 'NZD', '--json', '--database', db]))
        .stdout,
    ) as Record<string, string>;
    const otherKey = await cli(
      alipayArgs.map((a) => (a === merchant.wallet_id ? second.wallet_id : a)),
      { GATEWAY_MASTER_KEY: randomBytes(32).toString('base64') },
    );
    expect(otherKey).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/the master key given does not open the accounts stored already/),
    });
    expect(JSON.parse((await cli(['channel', 'list', '--json'])).stdout)).toHaveLength(1);
  });

  it('test makes a signed call: ok with the right keys, failed (exit 1) with the wrong ones', async () => {
    expect(await cli(['channel', 'test', '--wallet-id', merchant.wallet_id, '--method', 'alipay'])).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^ok: alipay/),
    });
    expect(alipay.calls.at(-1)).toBe('alipay.trade.query');
    const wrong = alipayArgs.map((a, i) =>
      alipayArgs[i - 1] === '--private-key-file' ? file('other.pem', keyPair(2).privateKey) : a,
    );
    const made = await run([
      'wallet',
      'create',
      '--user-id',
      merchant.user_id,
      '--currency',
      'NZD',
      '--json',
      '--database',
      db,
    ]);
    const other = (JSON.parse(made.stdout) as Record<string, string>).wallet_id;
    expect(await cli(wrong.map((a) => (a === merchant.wallet_id ? other : a)))).toMatchObject({ code: 0 });
    expect(await cli(['channel', 'test', '--wallet-id', other, '--method', 'alipay'])).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/^failed: alipay.*invalid-signature/),
    });
    expect(alipay.refused.at(-1)).toMatch(/does not verify/);
    expect(await cli(['channel', 'remove', '--wallet-id', other, '--method', 'alipay'])).toMatchObject({ code: 0 });
    expect(await cli(['channel', 'remove', '--wallet-id', other, '--method', 'alipay'])).toMatchObject({ code: 2 });
  });

  it('an Alipay account in certificate mode: the three certificate files; a signed test names their SNs; files that do not fit are refused, each named', async () => {
    const certFake = await FakeAlipay.start({ certMode: true });
    try {
      const fixture = (name: string) => join(ROOT, 'test/fixtures/alipay-cert-mode', name);
      const made = await run([
        'wallet',
        'create',
        '--user-id',
        merchant.user_id,
        '--currency',
        'NZD',
        '--json',
        '--database',
        db,
      ]);
      const wallet = (JSON.parse(made.stdout) as Record<string, string>).wallet_id;
      const base = [
        'channel',
        'set',
        '--wallet-id',
        wallet,
        '--method',
        'alipay',
        '--provider',
        'alipay',
        '--app-id',
        certFake.app_id,
        '--private-key-file',
        fixture('app.key'),
        '--endpoint',
        certFake.endpoint,
      ];
      const certs = [
        '--app-cert-file',
        fixture('app.crt'),
        '--alipay-cert-file',
        fixture('alipay.crt'),
        '--alipay-root-cert-file',
        fixture('root.crt'),
      ];
      // One certificate short, on a wallet without an account: refused, the missing one named.
      expect(await cli([...base, ...certs.slice(0, 4)])).toMatchObject({
        code: 2,
        stderr: expect.stringMatching(
          /--alipay-root-cert-file is required with --app-cert-file, --alipay-cert-file \(missing: --alipay-root-cert-file\)/,
        ),
      });
      const set = await cli([...base, ...certs]);
      expect(set, set.stderr).toMatchObject({
        code: 0,
        stdout: expect.stringMatching(
          /app_cert\s+-----BEGIN CERTIFICATE----- \(sha256 [0-9a-f]{16}, valid until 2126-11-01\)/,
        ),
      });
      expect(await cli(['channel', 'test', '--wallet-id', wallet, '--method', 'alipay'])).toMatchObject({
        code: 0,
        stdout: expect.stringMatching(/^ok: alipay/),
      });
      expect(certFake.calls.at(-1)).toBe('alipay.trade.query');
      expect(certFake.refused).toEqual([]);
      // Two certificates given again: the stored third is kept (an update changes what is given).
      expect(await cli([...base, ...certs.slice(0, 4)])).toMatchObject({ code: 0 });
      // Both modes at once, and an app certificate that is not the private key's.
      expect(await cli([...base, ...certs, '--alipay-public-key-file', fixture('alipay.crt')])).toMatchObject({
        code: 2,
        stderr: expect.stringMatching(/not both/),
      });
      const swapped = certs.map((a) => (a === fixture('app.crt') ? fixture('alipay.crt') : a));
      expect(await cli([...base, ...swapped])).toMatchObject({
        code: 2,
        stderr: expect.stringMatching(/app_cert is not the certificate of private_key/),
      });
      expect(
        await cli([...base, ...certs.map((a) => (a === fixture('root.crt') ? fixture('app.key') : a))]),
      ).toMatchObject({ code: 2, stderr: expect.stringMatching(/--alipay-root-cert-file is not a certificate/) });
    } finally {
      await certFake.close();
    }
  });

  it('a WeChat Pay account: the flags the guide names, a 32-character APIv3 key, a signed test', async () => {
    const args = [
      'channel',
      'set',
      '--wallet-id',
      merchant.wallet_id,
      '--method',
      'wechat',
      '--provider',
      'wechatpay',
      '--mchid',
      wechat.mchid,
      '--appid',
      wechat.appid,
      '--serial-no',
      wechat.merchantSerial,
      '--private-key-file',
      file('apiclient_key.pem', wechat.merchant.privateKey),
      '--platform-public-key-file',
      file('pub_key.pem', wechat.platform.publicKey),
      '--platform-public-key-id',
      wechat.platformKeyId,
      '--endpoint',
      wechat.url,
    ];
    expect(await cli([...args, '--apiv3-key-file', file('short.txt', 'too-short')])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/APIv3 key must be exactly 32/),
    });
    const set = await cli([...args, '--apiv3-key-file', file('apiv3.txt', `${wechat.apiv3Key}\n`)]);
    expect(set, set.stderr).toMatchObject({ code: 0, stdout: expect.stringContaining('/channels/wechatpay/notify') });
    expect(await cli(['channel', 'test', '--wallet-id', merchant.wallet_id, '--method', 'wechat'])).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^ok: wechatpay.*signature verified/),
    });
    // Unsigned, its 404 still proves the merchant's keys (the official SDKs verify successful answers
    // only); the test says the platform key is left to the first payment. Signed with another key, it fails.
    wechat.signing = 'none';
    expect(await cli(['channel', 'test', '--wallet-id', merchant.wallet_id, '--method', 'wechat'])).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^ok: wechatpay.*platform public key is checked by the first payment's answer/),
    });
    wechat.signing = 'wrong-key';
    expect(await cli(['channel', 'test', '--wallet-id', merchant.wallet_id, '--method', 'wechat'])).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/^failed: wechatpay.*does not verify/),
    });
    wechat.signing = 'ok';
    expect(wechat.refused).toEqual([]);

    // JSAPI needs the official account's AppSecret, sealed like the keys and never listed.
    const apiv3 = ['--apiv3-key-file', file('apiv3.txt', wechat.apiv3Key)];
    expect(await cli([...args, ...apiv3, '--jsapi', 'maybe'])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/--jsapi must be on or off/),
    });
    expect(await cli([...args, ...apiv3, '--jsapi', 'on'])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/AppSecret/),
    });
    // The AppSecret goes to the authorization endpoint: only WeChat's own, or a test double on this machine.
    const relay = await cli([
      ...args,
      ...apiv3,
      '--jsapi',
      'on',
      '--appsecret-file',
      file('appsecret.txt', wechat.appsecret),
      '--oauth-endpoint',
      'https://relay.example.com',
    ]);
    expect(relay).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/oauth_endpoint is for a test double on this machine only/),
    });
    expect(
      await cli([
        ...args,
        ...apiv3,
        '--jsapi',
        'on',
        '--appsecret-file',
        file('appsecret.txt', `${wechat.appsecret}\n`),
      ]),
    ).toMatchObject({ code: 0 });
    const listed = await cli(['channel', 'list', '--wallet-id', merchant.wallet_id, '--json']);
    expect(listed.stdout).not.toContain(wechat.appsecret);
    const account = (JSON.parse(listed.stdout) as Record<string, string>[]).find((a) => a.payment_method === 'wechat')!;
    expect(account).toMatchObject({
      jsapi: 'on',
      appsecret: expect.stringMatching(/^sealed \(sha256 [0-9a-f]+/),
      apiv3_key: expect.stringMatching(/^sealed /),
    });

    // A platform certificate beside the public key (a merchant moving to the public key): a
    // certificate is taken, a key or the configured key's own serial is not.
    expect(
      await cli([...args, ...apiv3, '--platform-certificate-file', file('not-a-cert.pem', wechat.platform.publicKey)]),
    ).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/--platform-certificate-file is not a certificate \(PEM, BEGIN CERTIFICATE\)/),
    });
    const withCert = await cli([
      ...args,
      ...apiv3,
      '--platform-certificate-file',
      file('wechatpay_cert.pem', wechat.certificate.pem),
    ]);
    expect(withCert, withCert.stderr).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(
        /platform_certificate\s+-----BEGIN CERTIFICATE----- \(sha256 [0-9a-f]+, valid until \d{4}-\d\d-\d\d\)/,
      ),
    });
    const own = await cli([
      ...args.slice(0, -4),
      '--platform-public-key-id',
      wechat.certificate.serial,
      '--endpoint',
      wechat.url,
      ...apiv3,
      '--platform-certificate-file',
      file('wechatpay_cert.pem', wechat.certificate.pem),
    ]);
    expect(own).toMatchObject({ code: 2, stderr: expect.stringMatching(/is the configured key .* itself/) });
  });

  it('the four bank and crypto providers: the flags the guide names, the notification address, a signed test each', async () => {
    const [poli, coin, azupay, unionpay] = await Promise.all([
      FakePoli.start(),
      FakeCoinPayments.start(),
      FakeAzupay.start(),
      FakeUnionpay.start(),
    ]);
    try {
      const aud = JSON.parse(
        (await run(['merchant', 'create', '--name', 'Sydney Wines', '--currency', 'AUD', '--json', '--database', db]))
          .stdout,
      ) as Record<string, string>;
      const wallet = (w: string, method: string, provider: string) => [
        'channel',
        'set',
        '--wallet-id',
        w,
        '--method',
        method,
        '--provider',
        provider,
      ];
      const accounts: [string, string, string, string[]][] = [
        [
          merchant.wallet_id,
          'polipay',
          'poli',
          [
            '--merchant-code',
            poli.merchant_code,
            '--authentication-code-file',
            file('poli.txt', `${poli.authentication_code}\n`),
            '--endpoint',
            poli.url,
          ],
        ],
        [
          merchant.wallet_id,
          'coin_payments',
          'coinpayments',
          [
            '--client-id',
            coin.client_id,
            '--client-secret-file',
            file('coin.txt', coin.client_secret),
            '--endpoint',
            coin.url,
          ],
        ],
        [
          aud.wallet_id,
          'payid',
          'azupay',
          [
            '--client-id',
            azupay.client_id,
            '--api-key-file',
            file('azupay.txt', azupay.api_key),
            '--payid-suffix',
            'pay.example.com.au',
            '--endpoint',
            `${azupay.url}/v1`,
          ],
        ],
        [
          merchant.wallet_id,
          'upi_upop',
          'unionpay',
          [
            '--mer-id',
            unionpay.mer_id,
            '--sign-cert-file',
            file('acp_sign.pfx', ''),
            '--sign-cert-password-file',
            file('acp_sign_password.txt', unionpay.pfxPassword),
            '--root-cert-file',
            file('acp_root.cer', unionpay.root.pem),
            '--middle-cert-file',
            file('acp_middle.cer', unionpay.middle.pem),
            '--endpoint',
            unionpay.url,
          ],
        ],
      ];
      // The .pfx as UnionPay's CFCA gives it: a binary file.
      writeFileSync(join(dir, 'acp_sign.pfx'), Buffer.from(unionpay.pfx, 'base64'));
      for (const [w, method, provider, flags] of accounts) {
        const set = await cli([...wallet(w, method, provider), ...flags]);
        expect(set, set.stderr).toMatchObject({
          code: 0,
          stdout: expect.stringContaining(`/channels/${provider}/notify`),
        });
        const test = await cli(['channel', 'test', '--wallet-id', w, '--method', method]);
        expect(test, test.stderr).toMatchObject({
          code: 0,
          stdout: expect.stringMatching(new RegExp(`^ok: ${provider}`)),
        });
      }
      // What each provider cannot take is refused by channel set, with its reason.
      expect(await cli([...wallet(aud.wallet_id, 'polipay', 'poli'), ...accounts[0][3]])).toMatchObject({
        code: 2,
        stderr: expect.stringContaining('POLi charges NZD') as string,
      });
      expect(await cli([...wallet(merchant.wallet_id, 'payid', 'azupay'), ...accounts[2][3]])).toMatchObject({
        code: 2,
        stderr: expect.stringContaining('Azupay takes AUD only') as string,
      });
      expect(
        await cli([
          ...wallet(merchant.wallet_id, 'upi_upop', 'unionpay'),
          '--sign-cert-password-file',
          file('wrong_password.txt', 'nope'),
        ]),
      ).toMatchObject({ code: 2, stderr: expect.stringContaining('cannot be opened with its password') as string });
      expect([poli.refused, coin.refused, azupay.refused, unionpay.refused]).toEqual([[], [], [], []]);
    } finally {
      await Promise.all([poli.close(), coin.close(), azupay.close(), unionpay.close()]);
    }
  });

  it('a server will not start without the master key its accounts were sealed with; with it, it takes live payments through them', async () => {
    const start = (masterKey?: string) =>
      startGateway({
        port: 0,
        host: '127.0.0.1',
        database: db,
        logLevel: 'silent',
        mode: 'live',
        ...(masterKey && { masterKey: parseMasterKey(masterKey) }),
      });
    await expect(start()).rejects.toThrow(/no master key is configured/);
    await expect(start(randomBytes(32).toString('hex'))).rejects.toThrow(
      /sealed under master key [0-9a-f]{16}, not this one/,
    );
    const gw = await start(MASTER);
    try {
      const body: Record<string, string> = {
        user_id: merchant.user_id,
        wallet_id: merchant.wallet_id,
        payment_method: 'alipay',
        amount: '10.00',
        return_url: 'https://m.example/r',
        callback_url: 'https://m.example/n',
        merchant_reference: `cli-${Date.now()}`,
        ip: '122.122.122.1',
        version: '2.0',
        product_name: 'Riesling',
        host_type: '1',
      };
      body.signature = signRequest(body, merchant.api_key);
      const reply = await (
        await fetch(`${gw.url}/v2/transaction`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        })
      ).json();
      expect(reply).toMatchObject({ code: 0 });
      expect(alipay.calls.at(-1)).toBe('alipay.trade.precreate');
    } finally {
      await gw.close();
    }
  });
});

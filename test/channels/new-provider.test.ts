// A new provider is its folder and a line in the registry: given one more provider (a throwaway
// of this test's, its descriptor and a connector), the CLI's `channel set` and the console offer it
// with its own fields, store its account with its secret sealed, and route its notifications.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMerchant, type MerchantCredentials } from '../../src/cli/admin.js';
import { channelSetCommand } from '../../src/cli/channels.js';
import { helpText, parseFlags } from '../../src/cli/command.js';
import { accountField, currencyModeField, endpointField } from '../../src/connectors/fields.js';
import { PROVIDER_DESCRIPTORS } from '../../src/connectors/registry.js';
import type { ChannelAccount, Connector } from '../../src/ports/connector.js';
import { AccountInputError, type ProviderDescriptor } from '../../src/ports/provider.js';
import { openStore } from '../../src/store/open.js';
import { openAccount } from '../../src/usecases/channel-accounts.js';
import { TEST_MASTER_KEY } from '../support/channels.js';
import { consoleUser, type ConsoleClient } from '../support/console-client.js';
import { ENGINES, startTestGateway, type TestGateway } from '../support/gateway.js';

const throwaway: ProviderDescriptor<{ shop_code: string }> = {
  name: 'throwaway',
  label: { en: 'Throwaway Pay', zh: '一次性支付' },
  methods: ['moneymore'],
  currencyModes: ['cross-border'],
  fields: [
    accountField(
      'shop_code',
      'text',
      { flag: 'shop-code', value: 'CODE' },
      { en: 'Shop code', zh: '商店代码' },
      { en: "the shop's code at Throwaway Pay", zh: '商店代码' },
    ),
    accountField(
      'shop_secret',
      'secret',
      { flag: 'shop-secret-file', file: true, value: 'FILE' },
      { en: 'Shop secret', zh: '商店密钥' },
      { en: "a file holding the shop's secret", zh: '存有商店密钥的文件' },
    ),
    currencyModeField(['cross-border']),
    endpointField(),
  ],
  parseAccount(account: ChannelAccount) {
    if (!account.config.shop_code) throw new AccountInputError('shop_code', 'is required');
    return { shop_code: account.config.shop_code };
  },
  checkAccount: (account) => (/^S\d+$/.test(account.config.shop_code ?? '') ? [] : ['shop_code must be S and digits']),
};

/** The connector: only what routing a notification needs. */
const seen: string[] = [];
const connector = {
  provider: 'throwaway',
  descriptor: throwaway,
  local: false,
  merchantId: (account: ChannelAccount) => account.config.shop_code ?? '',
  readNotification: async (inbound: { body: string }) => {
    seen.push(inbound.body);
    return { kind: 'ignored', reason: 'a test' };
  },
  notificationReply: (accepted: boolean) => ({ status: accepted ? 200 : 500, contentType: 'text/plain', body: 'OK' }),
} as unknown as Connector;

describe('a new provider: the CLI', () => {
  let dir: string;
  let database: string;
  let merchant: MerchantCredentials;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gw-new-provider-'));
    database = join(dir, 'gateway.db');
    const store = await openStore(database);
    merchant = await createMerchant(store, { name: 'New Provider Ltd', currency: 'NZD' });
    await store.close();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const command = channelSetCommand([...PROVIDER_DESCRIPTORS, throwaway]);

  it("offers its flags in channel set's help, under its name, with an example", () => {
    const help = helpText(command);
    expect(help).toContain('Options (Throwaway Pay, --provider throwaway):');
    expect(help).toMatch(/--shop-code CODE +the shop's code at Throwaway Pay/);
    expect(help).toContain('--shop-secret-file FILE');
    expect(help).toContain(`--provider ${[...PROVIDER_DESCRIPTORS.map((d) => d.name), 'throwaway'].join('|')}`);
    expect(help).toContain(
      'gateway channel set --wallet-id W00000001 --method moneymore --provider throwaway --shop-code CODE --shop-secret-file FILE',
    );
    // The registry's own command knows nothing of it.
    expect(() => parseFlags(channelSetCommand(PROVIDER_DESCRIPTORS), ['--shop-code', 'S1'])).toThrow(/unknown option/);
  });

  it('stores its account with the secret sealed, and keeps what an update does not give', async () => {
    const secretFile = join(dir, 'secret.txt');
    writeFileSync(secretFile, 'sesame-0123456789\n');
    const base = ['--wallet-id', merchant.wallet_id, '--method', 'moneymore', '--provider', 'throwaway'];
    const run = (args: string[]) =>
      command.run(parseFlags(command, [...base, ...args, '--database', database, '--json']));
    process.env.GATEWAY_MASTER_KEY = TEST_MASTER_KEY.key.toString('base64');
    try {
      // Its own flags only; its own rules.
      await expect(run(['--shop-code', 'S1', '--mchid', '1900000001'])).rejects.toThrow(
        /--mchid is a WeChat Pay flag, not one of a Throwaway Pay account/,
      );
      await expect(run(['--shop-code', 'S1'])).rejects.toThrow(/--shop-secret-file is required/);
      await expect(run(['--shop-code', 'nope', '--shop-secret-file', secretFile])).rejects.toThrow(
        /shop_code must be S and digits/,
      );
      await expect(
        run(['--shop-code', 'S1', '--shop-secret-file', secretFile, '--currency-mode', 'domestic']),
      ).rejects.toThrow(/--currency-mode must be cross-border, not domestic/);
      expect(await run(['--shop-code', 'S1', '--shop-secret-file', secretFile])).toBe(0);
      expect(await run(['--shop-code', 'S2'])).toBe(0);
      const store = await openStore(database);
      try {
        const stored = (await store.accounts.findChannelAccount(merchant.wallet_id, 'moneymore'))!;
        expect(stored.provider).toBe('throwaway');
        expect(stored.sealed_secrets).not.toContain('sesame');
        expect(openAccount(TEST_MASTER_KEY, stored)).toMatchObject({
          config: { shop_code: 'S2', currency_mode: 'cross-border', currency: 'NZD' },
          secrets: { shop_secret: 'sesame-0123456789' },
        });
      } finally {
        await store.close();
      }
    } finally {
      delete process.env.GATEWAY_MASTER_KEY;
    }
  });
});

describe.each(ENGINES)('a new provider: the console and the notification address on %s', (engine) => {
  let gw: TestGateway;
  let admin: ConsoleClient;
  beforeAll(async () => {
    gw = await startTestGateway(engine, { connectors: (defaults) => ({ ...defaults, throwaway: connector }) });
    admin = (await consoleUser(gw, 'operator', 'admin')).client;
  });
  afterAll(async () => gw?.close());

  it('offers a form with its fields only, and stores what it sends', async () => {
    const path = `/console/wallets/${gw.merchant.wallet_id}`;
    const page = (await admin.get(path)).body;
    const form = /<details class="provider-form" id="channel-form-throwaway">[\s\S]*?<\/details>/.exec(page)?.[0] ?? '';
    expect(form).toContain('<summary>Throwaway Pay</summary>');
    expect(form).toContain('<input id="ch-throwaway-shop_code" name="shop_code"');
    expect(form).toContain('<textarea id="ch-throwaway-shop_secret" name="shop_secret"');
    expect(form).toContain('<option value="moneymore">MoneyMore</option>');
    expect(form).not.toContain('mchid');
    expect(form).not.toContain('app_id');
    const saved = await admin.post(`${path}/channels`, {
      provider: 'throwaway',
      payment_method: 'moneymore',
      shop_code: 'S7',
      shop_secret: 'open-sesame',
      // Another provider's field in the same post is not this provider's: ignored.
      mchid: '1900000001',
    });
    expect(saved.location).toBe(`${path}?notice=saved`);
    const stored = (await gw.store.accounts.findChannelAccount(gw.merchant.wallet_id, 'moneymore'))!;
    expect(openAccount(TEST_MASTER_KEY, stored)).toMatchObject({
      provider: 'throwaway',
      config: { shop_code: 'S7', currency_mode: 'cross-border' },
      secrets: { shop_secret: 'open-sesame' },
    });
    const after = (await admin.get(path)).body;
    expect(after).toContain('MoneyMore · Throwaway Pay');
    expect(after).toMatch(/shop_secret<\/span><\/dt><dd>sealed \(sha256 [0-9a-f]{16}\)/);
    expect(after).not.toContain('open-sesame');
  });

  it('routes its notifications to its connector; an unknown name is 404', async () => {
    const answer = await fetch(`${gw.url}/channels/throwaway/notify`, { method: 'POST', body: 'hello' });
    expect([answer.status, seen.at(-1)]).toEqual([200, 'hello']);
    expect((await fetch(`${gw.url}/channels/nowhere/notify`, { method: 'POST', body: 'x' })).status).toBe(404);
    expect((await fetch(`${gw.url}/channels/constructor/notify`, { method: 'POST', body: 'x' })).status).toBe(404);
  });
});

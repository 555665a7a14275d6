// The SDK as a merchant gets it: `npm pack` in sdk/ (its prepack builds dist/), installed by file
// into a scratch project, imported by its package name from plain Node and from TypeScript.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');
const SDK = join(ROOT, 'sdk');
const NAME = '@payment-gateway/merchant-sdk';

let temp: string;
let app: string;
let packed: { filename: string; files: { path: string }[] };

beforeAll(async () => {
  temp = await mkdtemp(join(tmpdir(), 'sdk-package-'));
  app = join(temp, 'app');
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', temp], { cwd: SDK });
  [packed] = JSON.parse(stdout) as (typeof packed)[];

  await mkdir(app);
  await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'scratch', private: true, type: 'module' }));
  await run('npm', ['install', '--no-audit', '--no-fund', join(temp, packed.filename)], { cwd: app });
}, 60_000);

afterAll(async () => {
  if (temp) await rm(temp, { recursive: true, force: true });
});

describe('the packed SDK', () => {
  it('holds the built JavaScript with its declarations, the README, and no sources or tests', () => {
    const paths = packed.files.map((f) => f.path).sort();
    for (const module of ['index', 'client', 'signing', 'webhooks', 'notification', 'verification-error', 'hmac']) {
      expect(paths).toContain(`dist/${module}.js`);
      expect(paths).toContain(`dist/${module}.d.ts`);
    }
    expect(paths).toContain('README.md');
    expect(paths.filter((p) => /\.test\.|(?<!\.d)\.ts$/.test(p))).toEqual([]);
  });

  it('is imported by name from Node: signs and verifies a webhook, and a bad one throws its code', async () => {
    const script = `
      import { VerificationError, parseNotification, signRequest, verifyWebhook, webhookSignature } from '${NAME}';
      const key = 'k3y';
      const ts = String(Math.floor(Date.now() / 1000));
      const body = 'merchant_reference=R1&status=paid&signature=x';
      const headers = { id: 'evt_1', timestamp: ts, signature: webhookSignature('evt_1', ts, body, key) };
      const out = { ok: verifyWebhook(headers, Buffer.from(body), key).id, signed: signRequest({ a: '1' }, key).length };
      for (const [name, attempt] of [
        ['tampered', () => verifyWebhook(headers, body + 'x', key)],
        ['parsed', () => verifyWebhook(headers, { merchant_reference: 'R1' }, key)],
        ['noHeader', () => verifyWebhook({ ...headers, id: undefined }, body, key)],
        ['noField', () => parseNotification(body, key)],
      ]) {
        try { attempt(); out[name] = 'accepted'; }
        catch (err) { out[name] = err instanceof VerificationError ? err.code : String(err); }
      }
      console.log(JSON.stringify(out));
    `;
    await writeFile(join(app, 'check.mjs'), script);
    const { stdout } = await run(process.execPath, ['check.mjs'], { cwd: app });
    expect(JSON.parse(stdout)).toEqual({
      ok: 'evt_1',
      signed: 64,
      tampered: 'no_matching_signature',
      parsed: 'body_not_raw',
      noHeader: 'missing_header',
      noField: 'missing_field',
    });
  });

  it('type-checks from TypeScript through the exports map', async () => {
    await writeFile(
      join(app, 'check.ts'),
      `import { GatewayClient, VerificationError, verifyWebhook, type VerificationErrorCode } from '${NAME}';
       const client = new GatewayClient({ baseUrl: 'https://gw.example', userId: 'U1', walletId: 'W1', apiKey: 'k' });
       const code: VerificationErrorCode = 'body_not_raw';
       export const used = [client, code, VerificationError, verifyWebhook({ id: 'a', timestamp: '1', signature: 'v1,x' }, '', 'k').id];
       // @ts-expect-error the declarations keep the body type: a parsed object is refused at compile time too
       verifyWebhook({ id: 'a', timestamp: '1', signature: 'v1,x' }, { parsed: true }, 'k');
      `,
    );
    await writeFile(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          target: 'ES2022',
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          types: ['node'],
          typeRoots: [join(ROOT, 'node_modules/@types')],
        },
        files: ['check.ts'],
      }),
    );
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    const result = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: app }).catch(
      (err: { stdout: string }) => err,
    );
    expect(result.stdout).toBe('');
  }, 60_000);
});

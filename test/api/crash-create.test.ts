// A gateway process killed outright (SIGKILL) in the middle of a stream of creates: every create it
// answered with code 0 is there after a restart, with the nonce it answered. On SQLite the creates
// share group commits with the WAL flushed off the event loop; on PostgreSQL the creates of one
// turn are one statement (src/store/turn-batch.ts). (A kill keeps what reached the kernel; a power
// cut is the flush's business, tested in test/store/sqlite-flush.test.ts.)
import { execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { signRequest } from '../../sdk/signing.js';
import { openStore } from '../../src/store/open.js';
import { ENGINES } from '../support/gateway.js';
import { createTestDatabase } from '../support/pg-db.js';
import { freePort } from '../support/ports.js';
import { BIN, ROOT, exited, requireBuiltCli, serveProcess as serve } from '../support/serve-process.js';

describe.each(ENGINES)('a gateway killed mid-load keeps every create it acknowledged (%s)', (engine) => {
  let dir: string;
  let database: string;
  let merchant: { user_id: string; wallet_id: string; api_key: string };
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    requireBuiltCli();
    dir = mkdtempSync(join(tmpdir(), 'gw-crash-'));
    database = engine === 'postgres' ? await createTestDatabase(inject('pgUrl')) : join(dir, 'gateway.db');
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [BIN, 'merchant', 'create', '--name', 'Crash', '--currency', 'NZD', '--json', '--database', database],
      { cwd: ROOT },
    );
    merchant = JSON.parse(stdout) as typeof merchant;
  });
  afterAll(() => {
    for (const c of children) c.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    'every code-0 create answered before SIGKILL is found after the restart, with its nonce',
    { timeout: 60_000 },
    async () => {
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      const first = await serve(database, port);
      children.push(first);
      const acknowledged: Array<{ merchant_reference: string; nonce: string }> = [];
      let seq = 0;
      let killed = false;
      const loop = async () => {
        while (!killed) {
          const body: Record<string, string> = {
            user_id: merchant.user_id,
            wallet_id: merchant.wallet_id,
            payment_method: 'alipay',
            amount: '12.34',
            return_url: 'https://merchant.example/r',
            callback_url: 'https://merchant.example/n',
            merchant_reference: `crash-${++seq}`,
            ip: '122.122.122.1',
            version: '2.0',
            product_name: 'P',
          };
          body.signature = signRequest(body, merchant.api_key);
          try {
            const res = await fetch(`${url}/v2/transaction`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify(body),
            });
            const json = (await res.json()) as { code: number; nonce?: string };
            if (json.code === 0 && json.nonce)
              acknowledged.push({ merchant_reference: body.merchant_reference, nonce: json.nonce });
            // Killed right as an answer arrives, while the answers of its batch are still going out.
            if (acknowledged.length === 300) first.kill('SIGKILL');
          } catch {
            return; // the connection died with the process
          }
        }
      };
      const loops = Array.from({ length: 16 }, loop);
      while (acknowledged.length < 300) await new Promise((r) => setTimeout(r, 10));
      killed = true;
      await Promise.all(loops);
      await exited(first);

      const second = await serve(database, port);
      children.push(second);
      const lost: string[] = [];
      for (const a of acknowledged) {
        const signature = signRequest(
          { merchant_reference: a.merchant_reference, user_id: merchant.user_id },
          merchant.api_key,
        );
        const q = (await (
          await fetch(
            `${url}/v2/transaction/${a.merchant_reference}?user_id=${merchant.user_id}&signature=${signature}`,
          )
        ).json()) as { code: number; status?: string };
        if (q.code !== 0 || q.status !== 'pending') lost.push(`${a.merchant_reference}: ${JSON.stringify(q)}`);
      }
      expect(lost).toEqual([]);
      // Each stored with the nonce it was answered with.
      const store = await openStore(database);
      try {
        const rows = await store.db
          .selectFrom('nonces')
          .innerJoin('transactions', 'transactions.order_id', 'nonces.order_id')
          .select(['nonces.nonce', 'transactions.merchant_reference'])
          .where('transactions.user_id', '=', merchant.user_id)
          .execute();
        const nonceOf = new Map(rows.map((r) => [r.merchant_reference, r.nonce]));
        expect(acknowledged.filter((a) => nonceOf.get(a.merchant_reference) !== a.nonce)).toEqual([]);
      } finally {
        await store.close();
      }
      // The nonce each create answered with was stored with it: the gateway data call accepts it.
      const last = acknowledged[acknowledged.length - 1];
      const data = (await (await fetch(`${url}/v2/merchanthosted/gatewaydata/${last.nonce}`)).json()) as {
        code: number;
      };
      expect(data.code).not.toBe(1);
      second.kill('SIGTERM');
    },
  );
});

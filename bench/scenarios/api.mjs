// The request paths under load: create (hosted, and on SQLite also with synchronous=NORMAL),
// merchant-hosted create, gateway data, query and refund, each on one gateway per engine.
import { randomInt } from 'node:crypto';
import { signRequest } from '../../dist/sdk/signing.js';
import { openDb } from '../lib/db.mjs';
import { paired } from '../lib/floors.mjs';
import { freshDatabase, pendingHostedOrders, startGw } from '../lib/gateways.mjs';
import { DURATION, RUN, WARMUP, log, want } from '../lib/options.mjs';
import { JSON_HEADERS, createReq, measure, payAll, preCreate, queryPath } from '../lib/requests.mjs';
import { pick, row } from '../lib/results.mjs';
import { fmt } from '../lib/stats.mjs';

export async function engineRuns(engine) {
  const database = await freshDatabase(engine);
  const gw = await startGw(database);
  const m = gw.merchant;
  const db = await openDb(engine, database);
  const floorFor = engine === 'sqlite' ? 'b' : 'c';
  const created = [];
  const nonces = [];
  try {
    if (want('create')) {
      const { r, floorRps, ratio, ratios } = await paired(floorFor, `${engine} create hosted`, {
        url: gw.url,
        next: createReq(m),
        onOk: (tag) => created.push(tag),
      });
      row({
        group: 'create',
        name: engine === 'sqlite' ? 'create (hosted), durable' : 'create (hosted)',
        engine,
        ...pick(r),
        floor: floorFor,
        floorRps,
        ratio,
        note: `per-round ratios ${ratios?.map((x) => fmt(x, 2)).join(' ')}`,
        minRatio: engine === 'sqlite' ? 0.7 : 0.8,
        maxP99: engine === 'sqlite' ? 25 : undefined,
      });
    }
    if (want('create') && engine === 'sqlite') {
      // The first create target compares like with like: the floor's insert is synchronous=NORMAL,
      // and so is this gateway (SQLITE_SYNCHRONOUS=normal, no flush before the answer).
      const normal = await startGw(await freshDatabase(engine), { merchant: m, sqliteSynchronous: 'normal' });
      try {
        const { r, floorRps, ratio, ratios } = await paired(floorFor, `${engine} create hosted, synchronous=NORMAL`, {
          url: normal.url,
          next: createReq(m),
        });
        row({
          group: 'create',
          name: 'create (hosted), synchronous=NORMAL',
          engine,
          ...pick(r),
          floor: floorFor,
          floorRps,
          ratio,
          note: `per-round ratios ${ratios?.map((x) => fmt(x, 2)).join(' ')}`,
          minRatio: 0.7,
          maxP99: 25,
        });
      } finally {
        await normal.stop();
      }
    }
    if (want('create-mh')) {
      const r = await measure(`${engine} create merchant-hosted`, {
        url: gw.url,
        next: createReq(m, { mh: true }),
        onOk: (_t, body) => nonces.push(JSON.parse(body).nonce),
      });
      row({ group: 'create', name: 'create (merchant-hosted)', engine, ...pick(r), floor: floorFor });
    }
    if (want('gatewaydata')) {
      const need = Math.ceil((DURATION + WARMUP) * 1200);
      if (nonces.length < need) {
        log(`${engine}: pre-creating ${need - nonces.length} merchant-hosted orders for gateway data`);
        nonces.push(...(await preCreate(gw.url, m, need - nonces.length, { mh: true })).nonces);
      }
      const next = () => {
        const n = nonces.pop();
        return n ? { method: 'GET', path: `/v2/merchanthosted/gatewaydata/${n}` } : null;
      };
      const r = await measure(`${engine} gateway data`, { url: gw.url, next });
      row({
        group: 'read',
        name: 'gateway data (QR)',
        engine,
        ...pick(r),
        floor: 'a',
        note: r.exhausted ? 'ran out of nonces' : undefined,
      });
    }
    if (want('query') || want('refund') || want('notify')) {
      if (created.length < 5000) {
        log(`${engine}: pre-creating ${5000 - created.length} hosted orders`);
        created.push(...(await preCreate(gw.url, m, 5000 - created.length)).refs);
      }
    }
    if (want('query')) {
      const paths = Array.from({ length: 20_000 }, () => queryPath(m, created[randomInt(created.length)]));
      let i = 0;
      const { r, floorRps, ratio, ratios } = await paired('a', `${engine} query`, {
        url: gw.url,
        next: () => ({ method: 'GET', path: paths[i++ % paths.length] }),
      });
      row({
        group: 'read',
        name: 'query',
        engine,
        ...pick(r),
        floor: 'a',
        floorRps,
        ratio,
        note: `per-round ratios ${ratios?.map((x) => fmt(x, 2)).join(' ')}`,
        minRatio: 0.6,
      });
    }
    if (want('refund')) {
      const pending = await pendingHostedOrders(db, m);
      const paid = pending.splice(0, 1000).map((o) => o.order_id);
      log(`${engine}: paying ${paid.length} orders for refunds`);
      await payAll(gw.url, paid);
      let k = 0;
      const next = () => {
        const b = {
          user_id: m.user_id,
          order_id: paid[k % paid.length],
          refund_amount: '0.01',
          reference: `r${RUN}-${++k}`,
        };
        b.signature = signRequest(b, m.api_key);
        return { method: 'POST', path: '/refund', headers: JSON_HEADERS, body: JSON.stringify(b) };
      };
      const r = await measure(`${engine} refund`, { url: gw.url, next });
      row({ group: 'write', name: 'refund', engine, ...pick(r), floor: floorFor });
    }
  } finally {
    await gw.stop();
    await db.close();
  }
}

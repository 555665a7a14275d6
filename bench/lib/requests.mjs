// The requests the bench sends: signed creates and queries (the SDK signs them), and the load runs.
import { Pool } from 'undici';
import { signRequest } from '../../dist/sdk/signing.js';
import { runLoad } from './load.mjs';
import { CONNECTIONS, DURATION, RUN, WARMUP, loadavg, log, now } from './options.mjs';
import { fmt } from './stats.mjs';

let refSeq = 0;
export const JSON_HEADERS = { 'content-type': 'application/json;charset=UTF-8' };
let callbackUrl = 'http://127.0.0.1:9/notify';

/** Where the creates' notifications go: the receiver process, once it runs. */
export function setCallbackUrl(url) {
  callbackUrl = url;
}

/** `named`: the order's product_name is its merchant_reference (for a provider's fake to say which order it saw). */
export function createBody(m, { mh = false, payment_method = 'alipay', named = false } = {}) {
  const b = {
    user_id: m.user_id,
    wallet_id: m.wallet_id,
    payment_method,
    amount: '120.00',
    return_url: 'http://127.0.0.1:9/return',
    callback_url: callbackUrl,
    merchant_reference: `b${RUN}-${++refSeq}`,
    ip: '122.122.122.1',
    version: '2.0',
    product_name: 'Pinot Noir, Otago',
  };
  if (named) b.product_name = b.merchant_reference;
  if (mh) b.host_type = '1';
  b.signature = signRequest(b, m.api_key);
  return b;
}
export const createReq = (m, opts) => () => {
  const b = createBody(m, opts);
  return {
    method: 'POST',
    path: '/v2/transaction',
    headers: JSON_HEADERS,
    body: JSON.stringify(b),
    tag: b.merchant_reference,
  };
};
export function queryPath(m, ref, block = false) {
  const p = { merchant_reference: ref, user_id: m.user_id };
  if (block) p.is_block = '1';
  const qs = new URLSearchParams({
    user_id: m.user_id,
    ...(block && { is_block: '1' }),
    signature: signRequest(p, m.api_key),
  });
  return `/v2/transaction/${encodeURIComponent(ref)}?${qs}`;
}

/** Warm-up, then the measured run. */
export async function measure(label, opts) {
  if (WARMUP > 0 && !opts.amount)
    await runLoad({ connections: CONNECTIONS, ...opts, duration: WARMUP, onOk: opts.onOkWarmup ?? opts.onOk });
  const r = await runLoad({ connections: CONNECTIONS, duration: DURATION, ...opts });
  r.load = loadavg();
  log(
    `${label}: ${fmt(r.rps, 0)} req/s ok, p50 ${fmt(r.p50)} ms, p99 ${fmt(r.p99)} ms, max ${fmt(r.max)} ms, ok ${r.ok}, bad ${r.bad}${r.bad ? ' ' + JSON.stringify(r.badCodes) : ''}, errors ${r.errors}${r.exhausted ? ' (supply used up)' : ''}; loadavg ${r.load}`,
  );
  return r;
}

/** Creates `count` orders as fast as the server takes them; returns their references (and nonces). */
export async function preCreate(url, m, count, { mh = false } = {}) {
  const refs = [];
  const nonces = [];
  await runLoad({
    url,
    connections: Math.min(CONNECTIONS, count),
    amount: count,
    next: createReq(m, { mh }),
    onOk: (tag, body) => {
      refs.push(tag);
      if (mh) nonces.push(JSON.parse(body).nonce);
    },
  });
  return { refs, nonces };
}

/** POST /sandbox/pay/{order_id} result=paid for every order, `concurrency` at a time. */
export async function payAll(url, orderIds, concurrency = 50, onPaid) {
  const pool = new Pool(url, { connections: concurrency });
  let i = 0;
  let failed = 0;
  const worker = async () => {
    while (i < orderIds.length) {
      const id = orderIds[i++];
      const t0 = now();
      const res = await pool.request({
        method: 'POST',
        path: `/sandbox/pay/${id}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: 'result=paid',
      });
      const text = await res.body.text();
      if (!text.includes('"code":0')) failed++;
      onPaid?.(id, t0, now());
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  await pool.close();
  return { failed };
}

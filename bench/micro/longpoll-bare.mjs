// The floor of a long-poll wake: a bare node:http server (no Fastify, no log line, no store)
// holding N requests and answering all of them at once with a query-sized JSON body, as the
// gateway does when 10,000 polls wake. Prints the time until the client has every answer and the
// server's CPU time for it, and the server's RSS before and while it holds them (the polls come from
// the same lean client as in the gateway's runs, bench/lib/raw-polls.mjs); compare with
// `node bench/micro/longpoll-wake.mjs` and the long-poll rows of `npm run bench`.
//   node bench/micro/longpoll-bare.mjs [N=10000]      (raise the open-file limit first: ulimit -n)
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { Pool } from 'undici';
import { RawRequests } from '../lib/raw-polls.mjs';

if (process.argv[2] === 'server') {
  const held = [];
  const body = JSON.stringify({
    code: 0,
    message: 'SUCCESS',
    merchant_reference: 'wake-1',
    status: 'paid',
    currency: 'NZD',
    amount: 1,
    amount_cny: 4.64,
    rate: 4.6443,
    signature: 'a'.repeat(64),
    payment_method: 'alipay',
    order_id: '2026112200000001',
    pay_time: '2026-11-22 18:36:57',
  });
  const server = http.createServer((req, res) => {
    if (req.url !== '/wake') return void held.push(res);
    for (const r of held.splice(0)) {
      r.writeHead(200, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(body),
      });
      r.end(body);
    }
    res.end();
  });
  server.keepAliveTimeout = 600_000;
  server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
  process.on('message', () => {
    const c = process.cpuUsage();
    process.send({ cpuMs: (c.user + c.system) / 1000 });
  });
} else {
  const N = Number(process.argv[2] ?? 10_000);
  const child = fork(new URL(import.meta.url).pathname, ['server']);
  const { port } = await new Promise((r) => child.once('message', r));
  const cpuMs = () =>
    new Promise((r) => {
      child.once('message', (m) => r(m.cpuMs));
      child.send('cpu');
    });
  const rssMB = () => Number(readFileSync(`/proc/${child.pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+)/m)[1]) / 1024;
  const idleRss = rssMB();
  const polls = new RawRequests(`http://127.0.0.1:${port}`);
  const wake = new Pool(`http://127.0.0.1:${port}`, { connections: 1 });
  let answered = 0;
  let last = 0;
  let allAnswered;
  const all = new Promise((r) => (allAnswered = r));
  for (let i = 0; i < N; i += 500) {
    for (let j = i; j < Math.min(N, i + 500); j++) {
      const done = () => {
        last = performance.now();
        if (++answered === N) allAnswered();
      };
      polls.get('/poll', done, done);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  await new Promise((r) => setTimeout(r, 1500));
  const heldRss = rssMB();
  const c0 = await cpuMs();
  const t0 = performance.now();
  await (await wake.request({ method: 'GET', path: '/wake' })).body.text();
  await all;
  const cpu = (await cpuMs()) - c0;
  console.log(
    `bare node:http, ${N} held requests answered at once: the last received ${(last - t0).toFixed(0)} ms after the wake; server CPU ${cpu.toFixed(0)} ms (${((cpu * 1000) / N).toFixed(0)} us per answer); RSS ${idleRss.toFixed(0)} MB idle, ${heldRss.toFixed(0)} MB holding them (${(((heldRss - idleRss) * 1024) / N).toFixed(1)} KB per request)`,
  );
  child.kill();
  polls.destroy();
  await wake.destroy();
  process.exit(0);
}

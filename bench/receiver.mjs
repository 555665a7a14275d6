// The merchant's notification receiver, in its own process so that the load generator's event
// loop does not delay it. Answers every POST with HTTP 200 `sent` and records when each
// notification arrived (wall clock with sub-millisecond resolution).
// argv[2]: JSON config { nagle?: boolean }. nagle: answers as Python's http.server does, the headers
// and the body in two sends with Nagle's algorithm on, so each answer waits for the client's
// delayed ACK (about 40 ms).
// IPC: -> { type:'ready', url }; <- { type:'dump', reset } -> { type:'dump', records: [{ ref, status, t, answered }] }
//      <- { type:'mode', fail } -> { type:'mode' }   fail: answer HTTP 500 (recorded, answered 500) until told otherwise
import { createServer } from 'node:http';

const cfg = JSON.parse(process.argv[2] ?? '{}');
const now = () => performance.timeOrigin + performance.now();
let records = [];
let fail = false;
const server = createServer({ noDelay: !cfg.nagle }, (req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const t = now();
    const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
    const status = fail ? 500 : 200;
    const body = fail ? 'down' : 'sent';
    records.push({ ref: form.get('merchant_reference'), status: form.get('status'), t, answered: status });
    if (cfg.nagle) {
      res.writeHead(status, { 'content-type': 'text/plain', 'content-length': String(body.length) });
      res.flushHeaders();
      setImmediate(() => res.end(body));
    } else {
      res.writeHead(status, { 'content-type': 'text/plain' });
      res.end(body);
    }
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  process.send({ type: 'ready', url: `http://127.0.0.1:${server.address().port}`, pid: process.pid });
});
process.on('message', (m) => {
  if (m?.type === 'dump') {
    process.send({ type: 'dump', records });
    if (m.reset) records = [];
  } else if (m?.type === 'mode') {
    fail = Boolean(m.fail);
    process.send({ type: 'mode' });
  } else if (m?.type === 'stop') {
    server.close();
    process.exit(0);
  }
});
process.on('disconnect', () => process.exit(0));

// The merchant's notification receiver, in its own process so that the load generator's event
// loop does not delay it. Answers every POST with HTTP 200 `sent` and records when each
// notification arrived (wall clock with sub-millisecond resolution).
// IPC: -> { type:'ready', url }; <- { type:'dump', reset } -> { type:'dump', records: [{ ref, status, t }] }
import { createServer } from 'node:http';

const now = () => performance.timeOrigin + performance.now();
let records = [];
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const t = now();
    const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
    records.push({ ref: form.get('merchant_reference'), status: form.get('status'), t });
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('sent');
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
  } else if (m?.type === 'stop') {
    server.close();
    process.exit(0);
  }
});
process.on('disconnect', () => process.exit(0));

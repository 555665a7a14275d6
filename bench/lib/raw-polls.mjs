// Many held requests at once, each on a TCP connection of its own, with as little client work per
// answer as possible: the long-poll benchmarks measure how fast the server answers 10,000 polls,
// and undici's Pool cost its process about as much CPU per answer as the gateway spends, on the
// same two cores (docs/performance.md). Here an answer costs a read and a string search.
import net from 'node:net';

/**
 * GET requests, one per connection, HTTP/1.1, each answer read up to its content-length.
 * `onAnswer(status, body)` runs once per request when its answer is complete; `onError(error)`
 * once per request whose connection failed or closed first. The connections stay open until
 * destroy() (closing them while others are still being answered would cost the server work).
 */
export class RawRequests {
  constructor(url) {
    const u = new URL(url);
    this.host = u.hostname;
    this.port = Number(u.port);
    this.sockets = [];
  }

  get(path, onAnswer, onError) {
    const socket = net.connect({ host: this.host, port: this.port, noDelay: true });
    let text = '';
    let settled = false;
    const fail = (e) => {
      if (settled) return;
      settled = true;
      onError(e);
    };
    socket.on('data', (chunk) => {
      if (settled) return;
      text += chunk.toString('latin1');
      const head = text.indexOf('\r\n\r\n');
      if (head < 0) return;
      const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, head));
      if (!length) return fail(new Error(`answer without content-length: ${text.slice(0, 80)}`));
      const body = text.slice(head + 4);
      if (body.length < Number(length[1])) return; // a byte count: latin1 keeps one char per byte
      settled = true;
      onAnswer(Number(text.slice(9, 12)), Buffer.from(body, 'latin1').toString('utf8'));
    });
    socket.on('error', fail);
    socket.on('close', () => fail(new Error('connection closed before the answer')));
    socket.write(`GET ${path} HTTP/1.1\r\nhost: ${this.host}:${this.port}\r\n\r\n`);
    this.sockets.push(socket);
  }

  destroy() {
    for (const s of this.sockets) s.destroy();
    this.sockets = [];
  }
}

// Closing the gateway: waiting long polls are answered, and sockets a client opened but never
// used do not hold the shutdown (Node would wait for its 60 s headersTimeout on them).
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { waitUntil } from '../support/api.js';
import { ENGINES, startTestGateway } from '../support/gateway.js';

/** Resolves with 'closed' when close() finishes, or 'stuck' after a third of Node's headersTimeout. */
function closeOrStuck(close: () => Promise<void>): Promise<string> {
  const stuck = new Promise<string>((r) => setTimeout(() => r('stuck'), 20_000).unref());
  return Promise.race([close().then(() => 'closed'), stuck]);
}

describe.each(ENGINES)('shutdown on %s', (engine) => {
  it('an unused pre-opened socket does not hold close()', async () => {
    const gw = await startTestGateway(engine);
    expect((await gw.create()).reply.code).toBe(0);
    const { port } = new URL(gw.url);
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise<void>((r) => socket.once('connect', () => r()));
    const socketClosed = new Promise<void>((r) => socket.once('close', () => r()));
    socket.on('error', () => {});
    expect(await closeOrStuck(() => gw.close())).toBe('closed');
    await socketClosed;
  });

  it('a waiting long poll is answered with the current state', async () => {
    const gw = await startTestGateway(engine, { longPollTimeoutMs: 60_000 });
    const { merchant_reference } = await gw.create();
    const query = gw.query(merchant_reference, { block: true });
    await waitUntil(() => gw.ctx.signals.waiting > 0, 'the query waits');
    expect(await closeOrStuck(() => gw.close())).toBe('closed');
    expect(await query).toMatchObject({ code: 0, status: 'pending' });
  });
});

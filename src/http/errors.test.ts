import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { DatabaseConflict, DatabaseUnavailable } from '../ports/store.js';
import { handleError } from './errors.js';

// A failure the merchant can safely retry is answered as one: code 1 saying to send the same
// request again, never "internal error".
describe('handleError: database failures a retry mends', () => {
  const answerTo = async (error: Error) => {
    const app = Fastify();
    app.setErrorHandler(handleError);
    app.post('/x', () => {
      throw error;
    });
    const res = await app.inject({ method: 'POST', url: '/x' });
    await app.close();
    return { status: res.statusCode, body: res.json<{ code: number; message: string; detail: string }>() };
  };

  it('a conflict (deadlock) answers code 1: send the same request again', async () => {
    const { status, body } = await answerTo(new DatabaseConflict('deadlock detected'));
    expect(status).toBe(200);
    expect(body.code).toBe(1);
    expect(body.detail).toMatch(/concurrent one at the database.*send the same request again/);
    expect(body.detail).not.toMatch(/deadlock detected/);
  });

  it('an unavailable database answers code 1 too', async () => {
    const { body } = await answerTo(new DatabaseUnavailable('connect ECONNREFUSED'));
    expect(body.code).toBe(1);
    expect(body.detail).toMatch(/failover or a restart/);
  });

  it('anything else is an internal error, its message not shown', async () => {
    const { body } = await answerTo(new Error('secret internals'));
    expect(body.code).toBe(1);
    expect(body.detail).not.toMatch(/secret internals|send the same request/);
  });
});

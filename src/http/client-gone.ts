import type { ServerResponse } from 'node:http';
import type { WaitAbort } from '../ports/signals.js';

/**
 * Aborts a long poll whose client went away: the response closed before it was sent. A plain
 * object with one listener, instead of an AbortController, whose EventTarget costs every waiter
 * more to add and remove (docs/design/long-poll-waiters.md).
 */
export class ClientGone implements WaitAbort {
  aborted = false;
  private listener: { handleEvent(): void } | null = null;

  constructor(res: ServerResponse) {
    // 'close' also follows every response sent: only one closed unsent is an abort.
    res.once('close', () => {
      if (res.writableEnded) return;
      this.aborted = true;
      const l = this.listener;
      this.listener = null;
      l?.handleEvent();
    });
  }

  addEventListener(_type: 'abort', listener: { handleEvent(): void }): void {
    this.listener = listener;
  }

  removeEventListener(_type: 'abort', listener: { handleEvent(): void }): void {
    if (this.listener === listener) this.listener = null;
  }
}

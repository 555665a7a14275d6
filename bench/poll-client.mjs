// The long polls' client, in its own process (as the notification receiver is): the bench process
// has a large heap after the earlier scenarios, and its garbage collection would delay reading the
// answers. Polls go out on raw sockets (lib/raw-polls.mjs); times are wall clock with
// sub-millisecond resolution, comparable with the bench process's.
// IPC: -> { type: 'ready' }
//   <- { type: 'open', paths }  opens one poll per path        -> { type: 'open' }
//   <- { type: 'wait', total, timeoutMs }  until `total` polls are answered (or failed), or the timeout
//        -> { type: 'wait', answered, paid, errors, last, firstError }
//   <- { type: 'stop' }  closes every connection and exits
import { RawRequests } from './lib/raw-polls.mjs';

const { url } = JSON.parse(process.argv[2]);
const now = () => performance.timeOrigin + performance.now();
const polls = new RawRequests(url);
const state = { answered: 0, paid: 0, errors: 0, last: 0, firstError: undefined };
let waiting;

function settled() {
  state.last = now();
  state.answered++;
  if (waiting && state.answered >= waiting.total) reply();
}

function reply() {
  clearTimeout(waiting.timer);
  waiting = undefined;
  process.send({ type: 'wait', ...state });
}

process.on('message', (m) => {
  if (m?.type === 'open') {
    for (const path of m.paths) {
      polls.get(
        path,
        (status, body) => {
          if (status === 200 && body.includes('"status":"paid"')) state.paid++;
          settled();
        },
        (e) => {
          state.errors++;
          state.firstError ??= e.message;
          settled();
        },
      );
    }
    process.send({ type: 'open' });
  } else if (m?.type === 'wait') {
    waiting = { total: m.total, timer: setTimeout(reply, m.timeoutMs) };
    if (state.answered >= m.total) reply();
  } else if (m?.type === 'stop') {
    polls.destroy();
    process.exit(0);
  }
});
process.on('disconnect', () => process.exit(0));
process.send({ type: 'ready' });

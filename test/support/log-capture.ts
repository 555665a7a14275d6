import { Writable } from 'node:stream';

/** A log destination that keeps every JSON line the gateway writes: parsed in `lines`, as text in `raw`. */
export function captureLog<Line = Record<string, unknown>>(): { stream: Writable; lines: Line[]; raw: string[] } {
  const lines: Line[] = [];
  const raw: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString('utf8').split('\n').filter(Boolean)) {
        raw.push(l);
        lines.push(JSON.parse(l) as Line);
      }
      done();
    },
  });
  return { stream, lines, raw };
}

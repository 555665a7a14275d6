// The log's output (src/log-output.ts): lines written in batches lose nothing and keep their order,
// whether the gateway stops, the process exits without stopping, or the reader is slow.
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BatchedOutput } from '../../src/log-output.js';
import { until } from '../support/wait.js';

const ROOT = resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'gw-out-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const lineOf = (i: number) => `{"n":${i},"pad":"${'x'.repeat(i % 97)}"}\n`;

describe('BatchedOutput', () => {
  it('writes every line, in order, and what is pending when stopped', async () => {
    const file = join(dir, 'a.log');
    const fd = openSync(file, 'w');
    const out = new BatchedOutput(fd, 4096, 50);
    const expected: string[] = [];
    for (let i = 0; i < 20_000; i++) {
      expected.push(lineOf(i));
      out.write(lineOf(i));
      if (i % 1000 === 0) await new Promise((r) => setImmediate(r));
    }
    // A short tail waits for the timer, not for more lines.
    await until('the writes in flight', () => readFileSync(file, 'utf8').length === expected.join('').length, 5_000);
    out.write('{"last":true}\n');
    out.stop();
    closeSync(fd);
    expect(readFileSync(file, 'utf8')).toBe(expected.join('') + '{"last":true}\n');
  });

  it('a line alone is written within the flush interval', async () => {
    const file = join(dir, 'b.log');
    const fd = openSync(file, 'w');
    const out = new BatchedOutput(fd, 4096, 30);
    out.write('{"alone":1}\n');
    expect(readFileSync(file, 'utf8')).toBe('');
    await until('the timer to write the line', () => readFileSync(file, 'utf8') === '{"alone":1}\n', 2_000);
    out.stop();
    closeSync(fd);
  });

  it('past its limit it drops lines, and says how many, instead of holding them all', () => {
    const file = join(dir, 'c.log');
    const fd = openSync(file, 'w');
    const out = new BatchedOutput(fd, 1_000_000, 1000, 130);
    const kept = [0, 1, 2, 3].map((i) => `{"i":${i},"p":"${'y'.repeat(20)}"}\n`);
    for (const l of kept) expect(out.write(l)).toBe(true);
    expect(out.write('{"too":"much"}\n')).toBe(false);
    expect(out.write('{"too":"much"}\n')).toBe(false);
    out.stop();
    closeSync(fd);
    const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
    expect(lines.slice(0, 4).join('\n') + '\n').toBe(kept.join(''));
    expect(JSON.parse(lines[4])).toMatchObject({ level: 40, dropped: 2 });
    expect(lines).toHaveLength(5);
  });

  it('a process that exits without stopping still writes every line, through a pipe its reader is slow to drain', async () => {
    // 60,000 lines (about 3.3 MB) through a 64 KB pipe: the writer meets a full pipe (EAGAIN) many times.
    await expectAllLinesFrom(
      `for (let i = 0; i < 60000; i++) out.write(JSON.stringify({ n: i, pad: 'z'.repeat(40) }) + '\\n');
      process.exit(0);`,
      300,
    );
  });

  it('lines still waiting for a full pipe when the process exits are written, in order', async () => {
    // Written in turns, so that asynchronous writes meet the full pipe and wait to be retried; then
    // the process exits while the reader is still not reading.
    await expectAllLinesFrom(
      `for (let i = 0; i < 60000; i++) {
        out.write(JSON.stringify({ n: i, pad: 'w'.repeat(40) }) + '\\n');
        if (i % 500 === 0) await new Promise((r) => setTimeout(r, 1));
      }
      setTimeout(() => process.exit(0), 200);`,
      500,
    );
  });
});

/**
 * Runs `body` in a child process with `out`, a BatchedOutput on its standard output (a pipe that is
 * not read until `unreadMs` after the process began to exit: less than the second the exit's flush
 * waits for a reader that makes no room), and expects lines {"n":0} to {"n":59999} on it, in order.
 * Timed from the exit, not from the start: how long a process takes to start varies by machine.
 */
async function expectAllLinesFrom(body: string, unreadMs: number): Promise<void> {
  const script = `
    process.on('exit', () => process.stderr.write('exiting\\n'));
    const { BatchedOutput } = await import(${JSON.stringify(join(ROOT, 'dist/src/log-output.js'))});
    const out = new BatchedOutput(process.stdout.fd);
    ${body}
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.pause();
  let stderr = '';
  await new Promise<void>((exiting) =>
    child.stderr.on('data', (b: Buffer) => {
      stderr += b.toString();
      if (stderr.includes('exiting')) exiting();
    }),
  );
  await new Promise((r) => setTimeout(r, unreadMs));
  const chunks: Buffer[] = [];
  child.stdout.on('data', (b: Buffer) => chunks.push(b));
  child.stdout.resume();
  const code = await new Promise<number | null>((done) => child.once('close', (c) => done(c)));
  expect(code).toBe(0);
  const lines = Buffer.concat(chunks).toString('utf8').split('\n').filter(Boolean);
  expect(lines).toHaveLength(60_000);
  lines.forEach((l, i) => {
    if ((JSON.parse(l) as { n: number }).n !== i) throw new Error(`line ${i} is ${l}`);
  });
}

import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { KeyedHistogram } from '../../src/metrics/keyed-histogram.js';

// The request histogram keeps its series by a key of its own; what a scraper reads must be what
// prom-client's Histogram writes for the same observations, byte for byte.

const BUCKETS = [0.001, 0.01, 0.1, 1];
const NAME = 'x_request_seconds';
const HELP = 'Requests by "route", with a backslash \\ and a newline\nin the help';

type Obs = { method: string; route: string; status: number; code: string; value: number };

function both(observations: Obs[]) {
  const theirs = new Registry();
  const ours = new Registry();
  const h = new Histogram({
    name: NAME,
    help: HELP,
    labelNames: ['method', 'route', 'status', 'code'],
    buckets: BUCKETS,
    registers: [theirs],
  });
  const k = new KeyedHistogram(NAME, HELP, ['method', 'route', 'status', 'code'], BUCKETS, [ours]);
  for (const o of observations) {
    h.observe({ method: o.method, route: o.route, status: o.status, code: o.code }, o.value);
    k.observe([o.method, o.route, o.status, o.code], o.value);
  }
  return { theirs, ours, k };
}

const observations: Obs[] = [
  // On a bound (le is inclusive), between bounds, above every bound, zero.
  { method: 'GET', route: '/v2/transaction/:merchant_reference', status: 200, code: '0', value: 0.01 },
  { method: 'GET', route: '/v2/transaction/:merchant_reference', status: 200, code: '0', value: 0.0042 },
  { method: 'GET', route: '/v2/transaction/:merchant_reference', status: 200, code: '0', value: 7.5 },
  { method: 'GET', route: '/v2/transaction/:merchant_reference', status: 200, code: '0', value: 0 },
  { method: 'POST', route: '/v2/transaction', status: 200, code: '206', value: 0.2 },
  { method: 'POST', route: '/v2/transaction', status: 400, code: '', value: 1 },
  { method: 'GET', route: 'unmatched', status: 404, code: '', value: 0.000_5 },
  // A label value that needs escaping in the text format.
  { method: 'GET', route: '/odd "route"\\', status: 200, code: '', value: 0.05 },
];

describe('the keyed request histogram', () => {
  it('writes the text prom-client writes for the same observations', async () => {
    const { theirs, ours } = both(observations);
    const expected = await theirs.metrics();
    expect(expected).toContain('x_request_seconds_bucket{le="0.01",method="GET"');
    expect(await ours.metrics()).toBe(expected);
  });

  it('gives the same JSON as prom-client (getMetricsAsJSON)', async () => {
    const { theirs, ours } = both(observations);
    expect(await ours.getMetricsAsJSON()).toEqual(await theirs.getMetricsAsJSON());
  });

  it('counts every observation of a series, cumulatively per bucket', async () => {
    const { ours } = both(observations);
    const text = await ours.metrics();
    const line = (le: string) =>
      text
        .split('\n')
        .find((l) =>
          l.startsWith(`x_request_seconds_bucket{le="${le}",method="GET",route="/v2/transaction/:merchant_reference"`),
        );
    expect(line('0.001')).toMatch(/ 1$/);
    expect(line('0.01')).toMatch(/ 3$/);
    expect(line('1')).toMatch(/ 3$/);
    expect(line('+Inf')).toMatch(/ 4$/);
    expect(text).toContain(
      'x_request_seconds_sum{method="GET",route="/v2/transaction/:merchant_reference",status="200",code="0"} 7.5142',
    );
  });

  it('ignores a value that is not a finite number or the wrong number of labels instead of throwing, and starts again after reset', async () => {
    const { ours, k } = both([]);
    k.observe(['GET', '/a', 200, '0'], Number.NaN);
    k.observe(['GET', '/a', 200, '0'], Number.POSITIVE_INFINITY);
    k.observe(['GET', '/a', 200], 0.5);
    expect(await ours.metrics()).not.toContain('_count');
    k.observe(['GET', '/a', 200, '0'], 0.5);
    expect(await ours.metrics()).toContain('x_request_seconds_count{method="GET",route="/a",status="200",code="0"} 1');
    k.reset();
    expect(await ours.metrics()).not.toContain('_count');
  });

  it('refuses buckets that do not increase', () => {
    expect(() => new KeyedHistogram('y', 'y', ['a'], [0.1, 0.1], [])).toThrow(/increase/);
  });
});

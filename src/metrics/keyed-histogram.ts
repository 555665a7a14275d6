import type { Registry } from 'prom-client';

// A histogram for the hot path (one observation per HTTP request). prom-client's Histogram
// validates, sorts and hashes the label object on every observe; here the caller gives the label
// values in the order of the label names, a series is found through one map per label (the values
// are mostly the same string objects every time, whose hashes V8 keeps), and the label object is
// made once, when the series is first seen. The registry reads it through the same interface as
// its own metrics (name, help, type, get), so the text it writes is the one prom-client writes for
// a Histogram (a test compares the two byte for byte).

type Labels = Record<string, string | number>;

interface Series {
  labels: Labels;
  /** Observations per bucket (not cumulative); the last slot is above the highest bound. */
  counts: number[];
  sum: number;
  count: number;
}

interface ValuePair {
  labels: Labels;
  sharedLabels: Labels;
  value: number;
  metricName: string;
  exemplar?: null;
}

interface MetricData<V> {
  name: string;
  help: string;
  type: string;
  aggregator: string;
  values: V[];
}

export class KeyedHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  /** One map level per label; the last level's values are the series. */
  private readonly root = new Map<string | number, unknown>();
  private readonly series: Series[] = [];

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly string[],
    private readonly buckets: readonly number[],
    registers: Registry[],
  ) {
    if (labelNames.length === 0) throw new Error(`${name}: a keyed histogram needs labels`);
    for (let i = 1; i < buckets.length; i++)
      if (!(buckets[i] > buckets[i - 1])) throw new Error(`${name}: buckets must increase`);
    for (const r of registers) r.registerMetric(this as never);
  }

  /**
   * Records `value` in the series of these label values (one per label name, in their order). A
   * label's values must always come as the same type: 200 and '200' are two series to the maps,
   * and would be written as two identical lines.
   */
  observe(labelValues: readonly (string | number)[], value: number): void {
    // A measurement is never worth an exception on the request's path (prom-client throws here).
    if (!Number.isFinite(value) || labelValues.length !== this.labelNames.length) return;
    let level = this.root;
    const last = labelValues.length - 1;
    for (let i = 0; i < last; i++) {
      let next = level.get(labelValues[i]) as Map<string | number, unknown> | undefined;
      if (next === undefined) level.set(labelValues[i], (next = new Map()));
      level = next;
    }
    let s = level.get(labelValues[last]) as Series | undefined;
    if (s === undefined) {
      const labels: Labels = {};
      this.labelNames.forEach((n, i) => (labels[n] = labelValues[i]!));
      s = { labels, counts: new Array<number>(this.buckets.length + 1).fill(0), sum: 0, count: 0 };
      level.set(labelValues[last], s);
      this.series.push(s);
    }
    const b = this.buckets;
    let i = 0;
    while (i < b.length && value > b[i]) i++;
    s.counts[i]++;
    s.sum += value;
    s.count++;
  }

  /** The series for the text format (the registry prefers this one): series labels as shared labels. */
  getForPromString(): MetricData<ValuePair> {
    const values: ValuePair[] = [];
    const bucketName = `${this.name}_bucket`;
    for (const s of this.series) {
      let acc = 0;
      for (let i = 0; i < this.buckets.length; i++) {
        acc += s.counts[i];
        values.push({
          labels: { le: this.buckets[i] },
          value: acc,
          metricName: bucketName,
          exemplar: null,
          sharedLabels: s.labels,
        });
      }
      values.push(
        { labels: { le: '+Inf' }, value: s.count, metricName: bucketName, exemplar: null, sharedLabels: s.labels },
        { labels: {}, value: s.sum, metricName: `${this.name}_sum`, sharedLabels: s.labels },
        { labels: {}, value: s.count, metricName: `${this.name}_count`, sharedLabels: s.labels },
      );
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  /** The series as prom-client's Histogram.get gives them (getMetricsAsJSON): labels merged. */
  get(): MetricData<Omit<ValuePair, 'sharedLabels'>> {
    const data = this.getForPromString();
    return {
      ...data,
      values: data.values.map(({ sharedLabels, labels, ...rest }) => ({
        ...rest,
        labels: { ...labels, ...sharedLabels },
      })),
    };
  }

  reset(): void {
    this.root.clear();
    this.series.length = 0;
  }
}

import type { Registry } from 'prom-client';

/**
 * Counters and histograms for the request path. prom-client hashes a series' labels on every
 * inc() and observe(), its labels() children included: about a microsecond a request for the three
 * series each answer touches. Here a series is a plain object (a cell) that the caller looks up
 * once per label combination and keeps; counting is adding to a number. The registry reads the
 * cells in prom-client's own shapes when it is scraped (test/telemetry/cell-metrics.test.ts holds
 * the text and JSON of both side by side).
 */

type Labels = Readonly<Record<string, string>>;

interface MetricOptions<L extends string> {
  name: string;
  help: string;
  labelNames: readonly L[];
  registers: readonly Registry[];
}

interface ValuePair {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
  sharedLabels?: Labels;
  exemplar?: null | undefined;
}

interface MetricData {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  values: ValuePair[];
  aggregator: 'sum';
}

/** What a prom-client Registry asks of a metric it reads. */
abstract class CellMetric<L extends string, C extends { readonly labels: Labels }> {
  readonly name: string;
  readonly help: string;
  readonly aggregator = 'sum';
  abstract readonly type: 'counter' | 'histogram';
  protected cells = new Map<string, C>();

  constructor(private readonly options: MetricOptions<L>) {
    this.name = options.name;
    this.help = options.help;
    for (const registry of options.registers) {
      registry.registerMetric(this as unknown as Parameters<Registry['registerMetric']>[0]);
    }
  }

  /**
   * The series of these label values, in the order of labelNames, made on first use: count into
   * it (keeping it spares even this lookup).
   */
  cell(...values: string[]): C {
    const key = values.join('\u0000');
    let cell = this.cells.get(key);
    if (cell === undefined) {
      const names = this.options.labelNames;
      if (values.length !== names.length) {
        throw new Error(`${this.name} has the labels ${names.join(', ')}`);
      }
      cell = this.create(
        Object.fromEntries(names.map((name, index) => [name, values[index] ?? ''])),
      );
      this.cells.set(key, cell);
    }
    return cell;
  }

  protected abstract create(labels: Labels): C;

  protected abstract pairs(forText: boolean): ValuePair[];

  /** Every series starts over (Registry.resetMetrics); cells already handed out are let go. */
  reset(): void {
    this.cells = new Map();
  }

  get(): Promise<MetricData> {
    return Promise.resolve(this.data(false));
  }

  getForPromString(): Promise<MetricData> {
    return Promise.resolve(this.data(true));
  }

  private data(forText: boolean): MetricData {
    const { name, help, type, aggregator } = this;
    return { name, help, type, values: this.pairs(forText), aggregator };
  }
}

export interface CounterCell {
  readonly labels: Labels;
  /** Add to it: that is counting. */
  value: number;
}

export class CellCounter<L extends string> extends CellMetric<L, CounterCell> {
  readonly type = 'counter';

  protected create(labels: Labels): CounterCell {
    return { labels, value: 0 };
  }

  protected pairs(): ValuePair[] {
    return [...this.cells.values()].map(({ labels, value }) => ({ value, labels: { ...labels } }));
  }
}

export interface HistogramCell {
  readonly labels: Labels;
  /** Observations at or below each bound, not cumulative; the last slot is above every bound. */
  readonly counts: number[];
  sum: number;
  count: number;
}

export class CellHistogram<L extends string> extends CellMetric<L, HistogramCell> {
  readonly type = 'histogram';
  readonly #bounds: readonly number[];

  constructor(options: MetricOptions<L> & { buckets: readonly number[] }) {
    super(options);
    this.#bounds = [...options.buckets].sort((a, b) => a - b);
  }

  protected create(labels: Labels): HistogramCell {
    return { labels, counts: new Array<number>(this.#bounds.length + 1).fill(0), sum: 0, count: 0 };
  }

  observe(cell: HistogramCell, value: number): void {
    const bounds = this.#bounds;
    let slot = 0;
    while (slot < bounds.length && value > (bounds[slot] as number)) slot += 1;
    cell.counts[slot] = (cell.counts[slot] ?? 0) + 1;
    cell.sum += value;
    cell.count += 1;
  }

  protected pairs(forText: boolean): ValuePair[] {
    const bucket = `${this.name}_bucket`;
    const pairs: ValuePair[] = [];
    // As prom-client's Histogram gives them: for the text, the series' labels apart (shared);
    // for JSON, folded into each value's labels after `le`. Buckets carry a null exemplar.
    const pair = (
      cell: HistogramCell,
      own: Record<string, string | number>,
      value: number,
      metricName: string,
      exemplar?: null,
    ): ValuePair =>
      forText
        ? { labels: own, sharedLabels: cell.labels, value, metricName, exemplar }
        : { labels: { ...own, ...cell.labels }, value, metricName, exemplar };
    for (const cell of this.cells.values()) {
      let below = 0;
      this.#bounds.forEach((bound, index) => {
        below += cell.counts[index] ?? 0;
        pairs.push(pair(cell, { le: bound }, below, bucket, null));
      });
      pairs.push(pair(cell, { le: '+Inf' }, cell.count, bucket, null));
      pairs.push(pair(cell, {}, cell.sum, `${this.name}_sum`));
      pairs.push(pair(cell, {}, cell.count, `${this.name}_count`));
    }
    return pairs;
  }
}

import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { CellCounter, CellHistogram } from '../../src/telemetry/cell-metrics.js';

const BUCKETS = [0.001, 0.005, 0.01, 0.5, 1];
const OBSERVED: Array<[string, number]> = [
  ['listPets', 0.0004],
  ['getPet', 0.001],
  ['listPets', 0.007],
  ['listPets', 3],
  ['odd "op"\\\n', 0.5],
  ['getPet', 0.0101],
];

/** The same observations through prom-client's own metrics and through cells, each registry alone. */
function both(): { theirs: Registry; ours: Registry } {
  const theirs = new Registry();
  const ours = new Registry();
  const counter = { name: 'petstore_t_total', help: 'h', labelNames: ['operation', 'status'] };
  const histogram = {
    name: 'petstore_t_seconds',
    help: 'h',
    labelNames: ['operation'],
    buckets: BUCKETS,
  };
  const theirCounter = new Counter({ ...counter, registers: [theirs] });
  const theirHistogram = new Histogram({ ...histogram, registers: [theirs] });
  const ourCounter = new CellCounter({ ...counter, registers: [ours] });
  const ourHistogram = new CellHistogram({ ...histogram, registers: [ours] });
  for (const [operation, seconds] of OBSERVED) {
    const status = seconds > 1 ? '500' : '200';
    theirCounter.inc({ operation, status });
    theirHistogram.observe({ operation }, seconds);
    ourCounter.cell(operation, status).value += 1;
    ourHistogram.observe(ourHistogram.cell(operation), seconds);
  }
  return { theirs, ours };
}

describe('cell metrics', () => {
  it('read in the text format as prom-client writes the same counts', async () => {
    const { theirs, ours } = both();
    expect(await ours.metrics()).toBe(await theirs.metrics());
  });

  it('read as JSON as prom-client gives the same counts', async () => {
    const { theirs, ours } = both();
    expect(await ours.getMetricsAsJSON()).toEqual(await theirs.getMetricsAsJSON());
  });

  it('start over on a registry reset', async () => {
    const { theirs, ours } = both();
    theirs.resetMetrics();
    ours.resetMetrics();
    expect(await ours.metrics()).toBe(await theirs.metrics());
  });
});

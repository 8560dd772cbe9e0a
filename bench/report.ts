/** Medians over rounds, and the table `npm run bench` prints (Markdown, as bench/README.md shows it). */
import type { Scenario } from './load-runner.js';

export type Side = 'baseline' | 'service';

/** One measurement: one scenario, one round, one side. */
export interface Measurement {
  scenario: Scenario;
  round: number;
  side: Side;
  requests: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Server CPU time (every server process of the side) divided by requests. */
  cpuUsPerRequest: number;
  /**
   * PostgreSQL + Redis: their CPU over the measurement divided by its requests (bench/dependency-cpu.ts).
   * On the baseline's side, where nothing reaches them, it is what else used them meanwhile.
   */
  redisUsPerRequest?: number;
  postgresUsPerRequest?: number;
  /** What else the machine did meanwhile, in cores: the load generator, and everything else. */
  wrkCores: number;
  otherCores: number;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

export interface ScenarioSummary {
  scenario: Scenario;
  baseline: SideSummary;
  service: SideSummary;
  /** Each round's service/baseline ratio (the two ran back to back): median, lowest, highest. */
  rateRatio: Spread;
  cpuRatio: Spread;
}

export interface Spread {
  median: number;
  min: number;
  max: number;
}

function spread(values: readonly number[]): Spread {
  return { median: median(values), min: Math.min(...values), max: Math.max(...values) };
}

interface SideSummary {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  cpuUsPerRequest: number;
  redisUsPerRequest: number;
  postgresUsPerRequest: number;
}

function summarizeSide(measurements: readonly Measurement[]): SideSummary {
  return {
    requestsPerSecond: median(measurements.map((m) => m.requestsPerSecond)),
    p50Ms: median(measurements.map((m) => m.p50Ms)),
    p99Ms: median(measurements.map((m) => m.p99Ms)),
    cpuUsPerRequest: median(measurements.map((m) => m.cpuUsPerRequest)),
    redisUsPerRequest: median(measurements.map((m) => m.redisUsPerRequest ?? Number.NaN)),
    postgresUsPerRequest: median(measurements.map((m) => m.postgresUsPerRequest ?? Number.NaN)),
  };
}

export function summarize(
  scenarios: readonly Scenario[],
  measurements: readonly Measurement[],
): ScenarioSummary[] {
  return scenarios.map((scenario) => {
    const of = (side: Side) =>
      measurements
        .filter((m) => m.scenario === scenario && m.side === side)
        .sort((a, b) => a.round - b.round);
    const baseline = of('baseline');
    const service = of('service');
    const paired = service.map((s) => [s, baseline.find((b) => b.round === s.round)] as const);
    const ratios = (value: (m: Measurement) => number) =>
      spread(paired.flatMap(([s, b]) => (b ? [value(s) / value(b)] : [])));
    return {
      scenario,
      baseline: summarizeSide(baseline),
      service: summarizeSide(service),
      rateRatio: ratios((m) => m.requestsPerSecond),
      cpuRatio: ratios((m) => m.cpuUsPerRequest),
    };
  });
}

const int = (n: number) => Math.round(n).toLocaleString('en');
const ms = (n: number) => (n < 10 ? n.toFixed(2) : n.toFixed(1));
/** The median, and the range over rounds when there were several: the noise, at a glance. */
const ratio = ({ median, min, max }: Spread) =>
  min === max ? median.toFixed(2) : `${median.toFixed(2)} (${min.toFixed(2)}-${max.toFixed(2)})`;

/** `dependencies`: add the service side's Redis and PostgreSQL CPU per request. */
export function table(summaries: readonly ScenarioSummary[], dependencies = false): string {
  const extra = (s: ScenarioSummary) =>
    dependencies ? [int(s.service.redisUsPerRequest), int(s.service.postgresUsPerRequest)] : [];
  const rows = [
    [
      'scenario',
      'req/s baseline',
      'req/s service',
      'req/s ratio',
      'p50 ms b / s',
      'p99 ms b / s',
      'CPU µs/req baseline',
      'CPU µs/req service',
      'CPU ratio',
      ...(dependencies ? ['Redis µs/req', 'PostgreSQL µs/req'] : []),
    ],
    ...summaries.map((s) => [
      s.scenario,
      int(s.baseline.requestsPerSecond),
      int(s.service.requestsPerSecond),
      ratio(s.rateRatio),
      `${ms(s.baseline.p50Ms)} / ${ms(s.service.p50Ms)}`,
      `${ms(s.baseline.p99Ms)} / ${ms(s.service.p99Ms)}`,
      int(s.baseline.cpuUsPerRequest),
      int(s.service.cpuUsPerRequest),
      ratio(s.cpuRatio),
      ...extra(s),
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const line = (row: string[]) =>
    `| ${row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (i === 0 ? `:${'-'.repeat(w + 1)}` : `${'-'.repeat(w + 1)}:`)).join('|')}|`;
  return [line(rows[0]!), rule, ...rows.slice(1).map(line)].join('\n');
}

/** One progress line per measurement, printed as the run goes. */
export function describeMeasurement(m: Measurement): string {
  return (
    `round ${m.round} ${m.scenario.padEnd(11)} ${m.side.padEnd(8)} ` +
    `${int(m.requestsPerSecond).padStart(7)} req/s  p50 ${ms(m.p50Ms).padStart(5)} ms  ` +
    `p99 ${ms(m.p99Ms).padStart(5)} ms  ${int(m.cpuUsPerRequest).padStart(5)} µs CPU/req  ` +
    (m.redisUsPerRequest === undefined || m.postgresUsPerRequest === undefined
      ? ''
      : `(Redis ${int(m.redisUsPerRequest)}, PostgreSQL ${int(m.postgresUsPerRequest)} µs/req)  `) +
    `(wrk ${m.wrkCores.toFixed(2)} cores, rest of machine ${m.otherCores.toFixed(2)} cores)`
  );
}

import type { Answer } from './checks.js';

/** How many cases a run makes: FUZZ_RUNS (npm run fuzz sets 100,000), else a short run. */
export function fuzzRuns(short: number): number {
  const runs = Number(process.env.FUZZ_RUNS ?? short);
  if (!Number.isSafeInteger(runs) || runs < 1)
    throw new Error(`FUZZ_RUNS must be a positive integer (got "${process.env.FUZZ_RUNS}")`);
  return runs;
}

/**
 * FUZZ_SEED (and FUZZ_PATH) replay a run that failed: fast-check prints both. FUZZ_NO_SHRINK=1
 * reports the first failing case as generated, before shrinking.
 */
export function fuzzSeed(): { seed?: number; path?: string; endOnFailure?: boolean } {
  return {
    ...(process.env.FUZZ_SEED !== undefined ? { seed: Number(process.env.FUZZ_SEED) } : {}),
    ...(process.env.FUZZ_PATH !== undefined ? { path: process.env.FUZZ_PATH } : {}),
    ...(process.env.FUZZ_NO_SHRINK === '1' ? { endOnFailure: true } : {}),
  };
}

/** Statuses (and codes) seen per layer, for the assertions that each was reached and the summary. */
export class Tally {
  readonly #counts = new Map<string, Map<string, number>>();
  readonly #started = Date.now();

  count(layer: string, answer: Pick<Answer, 'status'>, code?: string): void {
    const counts = this.#counts.get(layer) ?? new Map<string, number>();
    this.#counts.set(layer, counts);
    const key = code === undefined ? String(answer.status) : `${answer.status} ${code}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }

  /** The statuses a layer answered, whatever the code. */
  statuses(layer: string): Set<number> {
    return new Set(
      [...(this.#counts.get(layer)?.keys() ?? [])].map((key) => Number(key.split(' ')[0])),
    );
  }

  cases(layer?: string): number {
    const layers =
      layer === undefined
        ? [...this.#counts.values()]
        : [this.#counts.get(layer) ?? new Map<string, number>()];
    return layers.reduce((sum, counts) => sum + [...counts.values()].reduce((a, b) => a + b, 0), 0);
  }

  summary(): string {
    const seconds = (Date.now() - this.#started) / 1000;
    const lines = [`fuzz: ${this.cases()} answers in ${seconds.toFixed(1)} s`];
    for (const [layer, counts] of this.#counts) {
      const sorted = [...counts].sort(([a], [b]) => a.localeCompare(b));
      lines.push(
        `  ${layer} (${this.cases(layer)}): ${sorted.map(([key, n]) => `${key}: ${n}`).join(', ')}`,
      );
    }
    return lines.join('\n');
  }
}

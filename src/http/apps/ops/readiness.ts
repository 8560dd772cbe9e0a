import type { Dependency } from '../../../domain/ports.js';
import type { Metrics } from '../../../telemetry/metrics.js';

export type ReadinessAnswer =
  | { ready: true; backends: Record<string, string> }
  | { ready: false; draining: true }
  | { ready: false; draining: false; down: Dependency; reason: unknown };

/** A scrape finding no check this recent runs one; /readyz always runs its own. */
const FRESH_MS = 5_000;
/** A scrape waits this long at most: a dependency that has not answered by then counts as down. */
const SCRAPE_DEADLINE_MS = 2_000;

/**
 * What /readyz answers, and the petstore_ready and petstore_dependency_up gauges that say the
 * same: every check sets them. A scrape with no check in the last FRESH_MS runs one, so the
 * gauges are current even where nothing polls /readyz (the ops listener's Prometheus alone).
 */
export class Readiness {
  private checkedAt = Number.NEGATIVE_INFINITY;
  private running: Promise<ReadinessAnswer> | undefined;

  constructor(
    private readonly dependencies: readonly Dependency[],
    /** Whether the public listener is draining before it stops (src/http/server/api-server.ts). */
    private readonly draining: () => boolean,
    private readonly metrics: Metrics,
  ) {}

  async check(deadlineMs?: number): Promise<ReadinessAnswer> {
    // Stopping: the load balancer takes this instance out while it still serves (the drain).
    if (this.draining()) {
      this.metrics.ready.set(0);
      this.checkedAt = performance.now();
      return { ready: false, draining: true };
    }
    const answers = await Promise.allSettled(
      this.dependencies.map((d) => (deadlineMs === undefined ? d.ping() : within(d, deadlineMs))),
    );
    this.checkedAt = performance.now();
    let down: ReadinessAnswer | undefined;
    this.dependencies.forEach((dependency, i) => {
      const answer = answers[i];
      const up = answer?.status === 'fulfilled';
      this.metrics.dependencyUp.set(
        { dependency: dependency.name, backend: dependency.backend },
        up ? 1 : 0,
      );
      if (!up && down === undefined) {
        down = { ready: false, draining: false, down: dependency, reason: answer?.reason };
      }
    });
    this.metrics.ready.set(down === undefined ? 1 : 0);
    return (
      down ?? {
        ready: true,
        backends: Object.fromEntries(this.dependencies.map((d) => [d.name, d.backend])),
      }
    );
  }

  /** Before a scrape: a check unless one ran lately; one at a time however many scrapes come. */
  async refreshIfStale(): Promise<void> {
    if (performance.now() - this.checkedAt < FRESH_MS) return;
    this.running ??= this.check(SCRAPE_DEADLINE_MS).finally(() => {
      this.running = undefined;
    });
    await this.running;
  }
}

async function within(dependency: Dependency, deadlineMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${dependency.name} did not answer within ${deadlineMs} ms`)),
      deadlineMs,
    );
  });
  try {
    await Promise.race([dependency.ping(), late]);
  } finally {
    clearTimeout(timer);
  }
}

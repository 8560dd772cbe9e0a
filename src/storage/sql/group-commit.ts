/** What one write of a group came to: its value, or the error that failed it alone. */
export type Outcome<R> = { ok: true; value: R } | { ok: false; error: unknown };

/** The most writes one group takes; more wait for the next. */
export const MAX_GROUP = 500;

export interface GroupCommitOptions<W, R> {
  /**
   * Groups committing at once: 1 where the engine has a single writer (SQLite: the writes that
   * arrive meanwhile wait and form the next group); more where a pool commits side by side.
   */
  maxInFlight: number;
  /**
   * Commits the group (one transaction where it can) and says how each write came out, in order.
   * Rejects only when none of the group is stored (an outage, a failed commit).
   */
  commit(group: readonly W[]): Promise<ReadonlyArray<Outcome<R>>>;
}

interface Waiting<W, R> {
  write: W;
  resolve(value: R): void;
  reject(error: unknown): void;
}

/**
 * Group commit, for every SQL backend: the writes that arrive while the event loop is busy wait for
 * its next turn and share one commit (one fsync, one round trip), and each still resolves only
 * after that commit.
 */
export class GroupCommit<W, R> {
  private pending: Array<Waiting<W, R>> = [];
  private scheduled = false;
  private inFlight = 0;
  private idle: Array<() => void> = [];
  private readonly flush = () => this.takeGroup();

  constructor(private readonly options: GroupCommitOptions<W, R>) {}

  submit(write: W): Promise<R> {
    return new Promise((resolve, reject) => {
      this.pending.push({ write, resolve, reject });
      this.schedule();
    });
  }

  /** Resolves once every write submitted so far has its outcome: each was promised an answer. */
  drain(): Promise<void> {
    if (this.pending.length === 0 && this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private schedule(): void {
    if (this.scheduled || this.pending.length === 0) return;
    if (this.inFlight >= this.options.maxInFlight) return;
    this.scheduled = true;
    // After the requests this turn of the event loop brings: they join the same commit.
    setImmediate(this.flush);
  }

  private takeGroup(): void {
    this.scheduled = false;
    if (this.pending.length === 0 || this.inFlight >= this.options.maxInFlight) return;
    const group = this.pending.splice(0, MAX_GROUP);
    this.inFlight += 1;
    void this.commit(group);
    this.schedule();
  }

  private async commit(group: Array<Waiting<W, R>>): Promise<void> {
    try {
      const results = await this.options.commit(group.map((waiting) => waiting.write));
      group.forEach((waiting, i) => {
        const result = results[i];
        if (result === undefined)
          waiting.reject(new Error('the commit gave no result for a write'));
        else if (result.ok) waiting.resolve(result.value);
        else waiting.reject(result.error);
      });
    } catch (error) {
      for (const waiting of group) waiting.reject(error);
    } finally {
      this.inFlight -= 1;
      this.schedule();
      if (this.pending.length === 0 && this.inFlight === 0) {
        for (const resolve of this.idle.splice(0)) resolve();
      }
    }
  }
}

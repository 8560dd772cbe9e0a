import { type Kysely, sql } from 'kysely';
import type { Database } from '../sql/database.js';

/**
 * PostgreSQL takes a pet's id from its sequence when the INSERT runs, before the transaction
 * commits, so a pet with a lower id than one already visible may still appear. Once a transaction
 * can no longer be running, every id it took has committed or never will: ids up to the highest
 * one visible `settleMs` ago have settled. This polls the highest visible id once a second while
 * the store is in use and answers from that history, without I/O on the request path.
 */
export class SettledIds {
  private history: Array<{ at: number; maxId: number }> = [];
  private settled = 0;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly db: Kysely<Database>,
    /** Longer than any transaction that inserts pets can run (see postgres-storage.ts). */
    private readonly settleMs: number,
    private readonly monotonicNow: () => number = () => performance.now(),
    private readonly pollMs = 1_000,
  ) {}

  /** See PetStore.settledThrough. Starts the polling on first use. */
  settledThrough(): number {
    if (this.timer === undefined && !this.closed) {
      this.timer = setInterval(() => void this.poll(), this.pollMs).unref();
      void this.poll();
    }
    const cutoff = this.monotonicNow() - this.settleMs;
    while (this.history.length > 0 && (this.history[0]?.at ?? Infinity) <= cutoff) {
      const seen = this.history.shift();
      if (seen !== undefined && seen.maxId > this.settled) this.settled = seen.maxId;
    }
    return this.settled;
  }

  /** Records the highest id visible now; a failed poll just leaves a gap in the history. */
  async poll(): Promise<void> {
    try {
      const { rows } = await sql<{
        max_id: bigint | null;
      }>`SELECT max(id) AS max_id FROM pets`.execute(this.db);
      // Timed when the answer arrived: the snapshot it read was taken at that moment at the latest.
      this.history.push({ at: this.monotonicNow(), maxId: Number(rows[0]?.max_id ?? 0) });
    } catch {
      // The database is down or slow: nothing new settles until it answers again.
    }
  }

  close(): void {
    this.closed = true;
    if (this.timer !== undefined) clearInterval(this.timer);
  }
}

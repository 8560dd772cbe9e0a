import { afterEach, describe, expect, it } from 'vitest';
import { create, holdWriteLock, startServer } from '../helpers/bad-days.js';
import { tempDatabaseUrl, type ServerProcess } from '../helpers/server-process.js';

/**
 * SIGTERM while creates wait for a write lock another process holds (issue 19 item 3): every
 * waiting create is answered (503 with Retry-After) before the process exits, and it exits within
 * the grace period (SHUTDOWN_GRACE_MS), not after the lock is released. Runs the built server.
 */

const running: ServerProcess[] = [];
afterEach(() => {
  for (const server of running.splice(0)) {
    if (server.child.exitCode === null) server.child.kill('SIGKILL');
  }
});

// Above two busy timeouts (5 s each: the waiting creates', then the shutdown's flush of usage
// counts), so that a busy machine's slower timers do not reach it; the lock is held past it.
const GRACE_MS = 15_000;

describe('SIGTERM while creates wait for the SQLite write lock', () => {
  it('answers every waiting create 503 and exits within the grace period', async () => {
    const database = tempDatabaseUrl();
    const { server, key } = await startServer(database, { SHUTDOWN_GRACE_MS: String(GRACE_MS) });
    running.push(server);
    const lock = await holdWriteLock(database.slice('sqlite:'.length), 30_000);
    const waiting = Array.from({ length: 8 }, () => create(server.url, key, 'waiting'));
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const sent = Date.now();
    server.child.kill('SIGTERM');
    const code = await server.exited;
    const exitMs = Date.now() - sent;
    const answers = await Promise.all(waiting);
    lock.child.kill('SIGKILL');
    console.log(
      `SIGTERM under a held lock: exit ${code} after ${exitMs} ms; answers ` +
        answers.map((a) => `${a.status ?? a.error}@${Math.round(a.ms ?? 0)}ms`).join(','),
    );
    expect(exitMs).toBeLessThan(GRACE_MS);
    for (const answer of answers) {
      expect(answer.error).toBeUndefined();
      expect(answer.status).toBe(503);
      expect(Number(answer.retryAfter)).toBeGreaterThan(0);
    }
  });
});

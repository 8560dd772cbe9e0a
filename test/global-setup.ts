import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';

/**
 * No test run leaves a process behind, whatever happens to it. Every process a test starts
 * inherits PETSTORE_TEST_RUN (helpers that build a child's environment from scratch copy it in
 * with `testRunEnv()`); at the end of the run, any process still carrying this run's mark is
 * killed and named. A run that was itself killed cannot sweep: the next run on the machine kills
 * what such a run left (its mark names a vitest process that no longer exists).
 */
const MARK = 'PETSTORE_TEST_RUN';

interface Marked {
  pid: number;
  mark: string;
  command: string;
}

function marked(): Marked[] {
  const found: Marked[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      const environ = readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0');
      const mark = environ.find((entry) => entry.startsWith(`${MARK}=`))?.slice(MARK.length + 1);
      if (!mark) continue;
      // A zombie (killed, not yet reaped by its parent) is already gone.
      if (/^\d+ \(.*\) Z /s.test(readFileSync(`/proc/${pid}/stat`, 'latin1'))) continue;
      const command = readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').join(' ').trim();
      found.push({ pid, mark, command });
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return found;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

// vitest's own workers carry the mark too (they inherit this process's environment).
const isVitest = (command: string) => /\bvitest\b/.test(command);

// Each project's teardown sweeps; a process killed by one is not named again by the next.
const killed: Set<number> = ((globalThis as { petstoreSwept?: Set<number> }).petstoreSwept ??=
  new Set());

function kill(processes: Marked[], why: string): void {
  for (const { pid, command } of processes) {
    if (killed.has(pid)) continue;
    killed.add(pid);
    console.warn(`[test run] killing ${why}: ${pid} ${command.slice(0, 200)}`);
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}

const ownerOf = (mark: string) => Number(mark.split(':')[0]);

// Each vitest project runs the global setup: the run is marked (and swept) once.
export function setup(): void {
  if (ownerOf(process.env[MARK] ?? '') === process.pid) return;
  const orphans = marked().filter(({ mark, command }) => {
    return !alive(ownerOf(mark)) && !isVitest(command);
  });
  kill(orphans, 'a process left by an earlier test run that did not end');
  process.env[MARK] = `${process.pid}:${randomUUID()}`;
}

export function teardown(): void {
  const left = marked().filter(
    ({ mark, command }) => ownerOf(mark) === process.pid && !isVitest(command),
  );
  kill(left, 'a process a test left running');
}

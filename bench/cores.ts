/**
 * --pin: where the benchmark's processes run. On a machine of few cores, the service, the baseline
 * and wrk scheduled anywhere take turns on the same cores, and each measurement depends on how the
 * scheduler happened to place them; with the servers on one core and wrk on the others, that part
 * of the spread is gone (the core's own slow spells on a shared machine are not).
 */
import { availableParallelism } from 'node:os';

/**
 * The cores a process may run on (`taskset -c` syntax, e.g. "1" or "0,2-3"); undefined: any, as
 * the scheduler decides.
 */
export type Cores = string | undefined;

/** `command args` run on `cores` only (taskset from util-linux, which execs it: same pid). */
export function onCores(
  cores: Cores,
  command: string,
  args: readonly string[],
): [string, string[]] {
  return cores === undefined ? [command, [...args]] : ['taskset', ['-c', cores, command, ...args]];
}

/** --pin's placement: the servers on the last core, wrk on the others. */
export function pinnedCores(): { servers: Cores; load: Cores } {
  const cores = availableParallelism();
  if (cores < 2) throw new Error('--pin needs at least 2 cores: one for the servers, one for wrk');
  return {
    servers: String(cores - 1),
    load: cores === 2 ? '0' : `0-${cores - 2}`,
  };
}

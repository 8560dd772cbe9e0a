import { availableParallelism, loadavg } from 'node:os';

/**
 * A time bound the service promises (a probe answered "at once", a change "within a second"),
 * stretched by how busy the machine is when it is checked: on 2 cores shared with other runs
 * (load 3-7), the same server takes several times longer to be scheduled, without anything being
 * wrong. An idle machine checks the bound as written; a blocked event loop or a missing
 * notification still misses it by far more.
 */
export function scaled(ms: number): number {
  const [lastMinute = 0] = loadavg();
  return Math.round(ms * Math.max(1, lastMinute / availableParallelism()));
}

/**
 * What the kernel says about a process and the machine, from /proc (Linux only): CPU time in
 * clock ticks, resident memory, load. The benchmark reads it before and after each measurement.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second (USER_HZ), the unit of the CPU times in /proc/<pid>/stat. */
export const TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** utime + stime of the process itself, and cutime + cstime of its children that were waited for. */
function statTicks(pid: number): { own: number; exitedChildren: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) is in parentheses and may hold spaces: count from after it.
  const fields = stat
    .slice(stat.lastIndexOf(')') + 2)
    .split(' ')
    .map(Number);
  // Fields 14 to 17 of proc(5) (utime, stime, cutime, cstime) are 11 to 14 here.
  const [utime = 0, stime = 0, cutime = 0, cstime = 0] = fields.slice(11, 15);
  return { own: utime + stime, exitedChildren: cutime + cstime };
}

/** utime + stime of one process alone (not its children): a Redis server, a PostgreSQL backend. */
export function ownTicks(pid: number): number {
  return statTicks(pid).own;
}

/** CPU ticks of this process's children that have exited: the load generator, once it is done. */
export function exitedChildrenTicks(): number {
  return statTicks(process.pid).exitedChildren;
}

/** Children still running, from /proc/<pid>/task/<tid>/children. */
function liveChildren(pid: number): number[] {
  const children: number[] = [];
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return children;
  }
  for (const tid of tasks) {
    try {
      const text = readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim();
      if (text !== '') children.push(...text.split(' ').map(Number));
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return children;
}

/** CPU ticks of a process and all its descendants, living or exited (and waited for). */
export function cpuTicks(pid: number): number {
  const { own, exitedChildren } = statTicks(pid);
  let total = own + exitedChildren;
  for (const child of liveChildren(pid)) {
    try {
      total += cpuTicks(child);
    } catch {
      // The child exited meanwhile; once waited for, its time is in our cutime/cstime.
    }
  }
  return total;
}

/** Ticks the whole machine spent busy (every core): all of /proc/stat's "cpu" line but idle. */
export function machineBusyTicks(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
  const [, user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).map(Number);
  return [user, nice, system, irq, softirq, steal].reduce<number>((sum, v) => sum + (v ?? 0), 0);
}

export interface Memory {
  /** Resident set size now, in KiB (VmRSS). */
  rssKiB: number;
  /** Highest resident set size so far, in KiB (VmHWM). */
  peakKiB: number;
}

export function memory(pid: number): Memory {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) =>
    Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]);
  return { rssKiB: field('VmRSS'), peakKiB: field('VmHWM') };
}

/** Open file descriptors (sockets, files, pipes, epoll, timers): the entries of /proc/<pid>/fd. */
export function openFiles(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

/** The 1-, 5- and 15-minute load averages, as `uptime` prints them. */
export function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

export function cpuModel(): string {
  const info = readFileSync('/proc/cpuinfo', 'utf8');
  return /^model name\s*:\s*(.+)$/m.exec(info)?.[1]?.trim() ?? 'unknown CPU';
}

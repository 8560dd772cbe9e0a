import type { LimitWindow, LiveBan } from '../../domain/ports.js';

/**
 * A lease is never more than this share of the smallest limit of a request's windows: quota
 * stranded in the leases of other instances (or lost with one that dies) stays a small part of
 * the limit.
 */
export const MAX_LEASE_SHARE = 1 / 100;
/**
 * Below this limit every lease is one request, so the published plans (and enterprise limits up
 * to it) stay exact request by request, headers included, across instances.
 */
export const MIN_LEASED_LIMIT = 10_000;
/** A lease is sized to last about this long at the subject's recent rate on this instance. */
export const LEASE_TARGET_MS = 200;
/** A lease grows at most this many times over the last one, so a burst does not lease at once. */
const LEASE_GROWTH = 4;
/**
 * A lease is spent only this long after Redis last answered this instance: while Redis does not
 * answer, an instance serves at most what it holds for this long, then fails closed (503) like
 * every other. A PING every third of it keeps it fresh while Redis answers.
 */
export const LEASE_TRUST_MS = 250;
/** A lease unused this long is given back, so idle instances do not sit on quota. */
export const LEASE_IDLE_MS = 1_000;
/** Subjects remembered at most; past it the least recently used are dropped (and given back). */
export const MAX_SUBJECTS = 50_000;

/** What this instance knows of one subject's windows, and the requests it may still grant. */
export interface Lease {
  /** Window numbers (time / length) the counts are for, in request order. */
  numbers: number[];
  lengths: number[];
  limits: number[];
  /** Each window's count in Redis after the last grant; includes `left`. */
  used: number[];
  /**
   * Each window's count as last seen before Redis lost it, if ever: what a window whose key is
   * missing mid-window starts from again (a restart without its data).
   */
  floors: number[];
  /** Requests granted to this instance and not yet spent. */
  left: number;
  /** When the first of the windows ends (epoch ms, the shared clock). */
  endsAt: number;
}

export interface SubjectState {
  lease: Lease | undefined;
  /** A ban Redis reported; refused here until it ends or is lifted, without asking again. */
  ban: LiveBan | undefined;
  /** A lease being asked for: requests arriving meanwhile wait for it instead of asking too. */
  pending: Promise<unknown> | undefined;
  /** The size of the last lease asked for. */
  size: number;
  /** When that lease was asked for (monotonic ms), and how many requests were served since. */
  leasedAt: number;
  served: number;
  /** When a request last used the lease (monotonic ms). */
  touchedAt: number;
}

export const newState = (): SubjectState => ({
  lease: undefined,
  ban: undefined,
  pending: undefined,
  size: 1,
  leasedAt: 0,
  served: 0,
  touchedAt: 0,
});

/** The largest lease a request's windows allow: 1 below MIN_LEASED_LIMIT. */
export function leaseCap(windows: readonly LimitWindow[]): number {
  let smallest = Number.POSITIVE_INFINITY;
  for (const window of windows) smallest = Math.min(smallest, window.limit);
  return smallest < MIN_LEASED_LIMIT ? 1 : Math.floor(smallest * MAX_LEASE_SHARE);
}

/** The next lease's size, from the rate the subject was served at since the last one. */
export function nextLeaseSize(state: SubjectState, cap: number, monotonicNow: number): number {
  if (cap <= 1) return 1;
  const elapsed = Math.max(1, monotonicNow - state.leasedAt);
  // At least a tenth of the largest lease once the subject is busy: a slow instance among fast
  // ones still asks Redis rarely, and what it may strand stays a tenth of a percent of the limit.
  const wanted = Math.max(Math.ceil((state.served * LEASE_TARGET_MS) / elapsed), cap / 10);
  return Math.max(1, Math.floor(Math.min(cap, wanted, state.size * LEASE_GROWTH)));
}

/** Whether the lease covers a request with these windows at `now` (the shared clock). */
export function leaseFits(lease: Lease, windows: readonly LimitWindow[], now: number): boolean {
  if (now >= lease.endsAt || lease.numbers.length !== windows.length) return false;
  for (let i = 0; i < windows.length; i++) {
    const window = windows[i] as LimitWindow;
    if (
      lease.lengths[i] !== window.lengthMs ||
      lease.limits[i] !== window.limit ||
      lease.numbers[i] !== Math.floor(now / window.lengthMs)
    ) {
      return false;
    }
  }
  return true;
}

/**
 * The floors to keep from a reply: the counts it reports, except for windows Redis rebuilt after
 * losing them, where what this instance knew before the loss stays the floor.
 */
export function floorsAfter(
  previous: Lease | undefined,
  used: readonly number[],
  restored: readonly number[],
  now: number,
  windows: readonly LimitWindow[],
): number[] {
  return used.map((count, i) => {
    if (restored[i] !== 1) return count;
    const window = windows[i] as LimitWindow;
    const same = previous?.numbers[i] === Math.floor(now / window.lengthMs);
    return same ? (previous?.floors[i] ?? 0) : 0;
  });
}

/** The counts a request served from the lease sees: Redis's, less what this instance still holds. */
export function usedSeen(lease: Lease): number[] {
  return lease.used.map((count) => count - lease.left);
}

export function leaseOf(
  windows: readonly LimitWindow[],
  used: number[],
  left: number,
  now: number,
  floors: number[],
): Lease {
  let endsAt = Number.POSITIVE_INFINITY;
  const numbers = windows.map((window) => {
    const number = Math.floor(now / window.lengthMs);
    endsAt = Math.min(endsAt, (number + 1) * window.lengthMs);
    return number;
  });
  return {
    numbers,
    lengths: windows.map((w) => w.lengthMs),
    limits: windows.map((w) => w.limit),
    used,
    floors,
    left,
    endsAt,
  };
}

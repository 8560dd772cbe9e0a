import type { RedisConfig } from '../../config/config.js';
import type {
  ConsumeOutcome,
  ConsumeRequest,
  LimitWindow,
  LiveBan,
  RateLimitStore,
} from '../../domain/ports.js';
import { NO_REDIS_OBSERVER, type RedisObserver } from '../observer.js';
import {
  callRedis,
  closeRedisConnection,
  firstConnectionAttempt,
  openRedisConnection,
  pingRedis,
  type RedisClient,
  type RedisConnectionOptions,
} from './redis-connection.js';
import {
  floorsAfter,
  type Lease,
  LEASE_IDLE_MS,
  LEASE_TRUST_MS,
  leaseCap,
  leaseFits,
  leaseOf,
  MAX_SUBJECTS,
  newState,
  nextLeaseSize,
  type SubjectState,
  usedSeen,
} from './rate-limit-leases.js';
import { GIVE_BACK_LUA, LEASE_LUA, LIFT_LUA, PEEK_LUA } from './rate-limit-scripts.js';

/**
 * How long a key outlives the end of its window or ban. The key names its window, so an old
 * window's key is never read again and this margin only delays its removal (and lets a lease
 * of an ended window be given back to the longer windows it was also counted in).
 */
export const KEY_GRACE_MS = 10_000;

/**
 * Window keys are declared for the shared time estimated here less and plus this: the estimate runs
 * ahead of Redis's clock by up to a round trip, and a script that finds the window at its own time
 * undeclared is asked again with a corrected estimate.
 */
const WINDOW_MARGIN_MS = 1_000;
/** Script runs of one call at most while the estimate of Redis's clock settles. */
const SCRIPT_ATTEMPTS = 3;

type ScriptArgument = string | number;

/** The connection with the commands `defineCommand` adds; ioredis cannot type them itself. */
type ScriptedRedis = RedisClient & {
  rateLimitLease(keyCount: number, ...args: ScriptArgument[]): Promise<unknown>;
  rateLimitGiveBack(keyCount: number, ...args: ScriptArgument[]): Promise<unknown>;
  rateLimitPeek(keyCount: number, ...args: ScriptArgument[]): Promise<unknown>;
  rateLimitLift(keyCount: number, ...args: ScriptArgument[]): Promise<unknown>;
};

function withScripts(client: RedisClient): ScriptedRedis {
  // defineCommand sends EVALSHA and, when Redis answers NOSCRIPT (restarted, SCRIPT FLUSH, a
  // failover), loads the script with EVAL on that connection and runs it again.
  client.defineCommand('rateLimitLease', { lua: LEASE_LUA });
  client.defineCommand('rateLimitGiveBack', { lua: GIVE_BACK_LUA });
  client.defineCommand('rateLimitPeek', { lua: PEEK_LUA, readOnly: true });
  client.defineCommand('rateLimitLift', { lua: LIFT_LUA });
  return client as ScriptedRedis;
}

export interface RedisRateLimitStoreOptions {
  /**
   * `redis` (what the service uses): windows and bans on the Redis server's clock (TIME inside
   * each script), one clock for every instance whatever theirs say; the store's `now()` estimates
   * it. `caller`: on the `now` each call passes, so tests can move time.
   */
  time?: 'redis' | 'caller';
  /** Told of each round trip to Redis: `lease`, `give_back`, `peek`, `lift`, `ping`. */
  observer?: RedisObserver;
}

/**
 * Counters and bans in Redis, shared by every instance of the service. An instance leases a block
 * of a subject's remaining quota in one script run and spends it locally (one request per lease
 * for small limits, so they stay exact request by request); a ban Redis reported is refused
 * locally until it ends. A failure of Redis rejects with DependencyUnavailableError, never hangs.
 */
export class RedisRateLimitStore implements RateLimitStore {
  readonly backend = 'redis';
  private readonly client: ScriptedRedis;
  private readonly serverTime: boolean;
  private readonly observer: RedisObserver;
  /** Redis's clock less this process's monotonic one, as last seen (never behind it). */
  private offset = Date.now() - performance.now();
  /** By subject, least recently used first. */
  private readonly subjects = new Map<string, SubjectState>();
  private readonly timer: NodeJS.Timeout;
  private readonly heartbeat: NodeJS.Timeout;
  private beating = false;
  /** When Redis last answered a script (monotonic ms). */
  private lastAnswerAt = Number.NEGATIVE_INFINITY;

  constructor(
    client: RedisClient,
    private readonly keyPrefix: string,
    options: RedisRateLimitStoreOptions = {},
  ) {
    this.client = withScripts(client);
    this.serverTime = options.time === 'redis';
    this.observer = options.observer ?? NO_REDIS_OBSERVER;
    this.timer = setInterval(() => this.giveBackIdle(), LEASE_IDLE_MS);
    this.timer.unref();
    this.heartbeat = setInterval(() => this.beat(), LEASE_TRUST_MS / 3);
    this.heartbeat.unref();
  }

  /** Redis's clock as estimated here, when windows follow it; see RedisRateLimitStoreOptions. */
  get sharedTime(): number | undefined {
    return this.serverTime ? performance.now() + this.offset : undefined;
  }

  consumeNow(request: ConsumeRequest): ConsumeOutcome | undefined {
    return this.decideHere(this.state(request.subject), request);
  }

  async consume(request: ConsumeRequest): Promise<ConsumeOutcome> {
    const { subject, windows } = request;
    const state = this.state(subject);
    for (;;) {
      const here = this.decideHere(state, request);
      if (here !== undefined) return here;
      const cap = leaseCap(windows);
      // With leases of one request each, concurrent requests ask Redis each, as before leases.
      if (cap > 1 && state.pending !== undefined) {
        await state.pending;
        continue;
      }
      const asked = this.lease(subject, state, request, cap);
      if (cap > 1) {
        // Resolves with the lease, never rejects: the waiters only need to know it is over.
        const pending: Promise<unknown> = asked.then(
          () => undefined,
          () => undefined,
        );
        state.pending = pending;
        void pending.then(() => {
          if (state.pending === pending) state.pending = undefined;
        });
      }
      return await asked;
    }
  }

  async peek(subject: string, windows: readonly LimitWindow[], now: number): Promise<number[]> {
    if (windows.length === 0) return [];
    let values: number[] | undefined;
    let at = 0;
    for (let attempt = 0; values === undefined; attempt++) {
      const sentAt = performance.now();
      const keys = this.scriptKeys(subject, windows, now);
      const reply = await callRedis(this.observer, 'peek', () =>
        this.client.rateLimitPeek(
          keys.length,
          ...keys,
          this.timeArgument(now),
          KEY_GRACE_MS,
          ...windows.map((w) => w.lengthMs),
        ),
      );
      const retry = retryAt(reply);
      if (retry === undefined) {
        values = counts(reply, windows.length + 1);
        at = this.sawTime(values.pop() as number, sentAt);
      } else {
        this.sawTime(retry, sentAt);
        if (attempt + 1 >= SCRIPT_ATTEMPTS) throw undeclaredWindow(reply);
      }
    }
    const lease = this.subjects.get(subject)?.lease;
    if (lease === undefined || !leaseFits(lease, windows, at)) return values;
    return values.map((count) => count - lease.left);
  }

  async lift(subject: string, liftedAt?: number): Promise<void> {
    const state = this.subjects.get(subject);
    if (state?.ban !== undefined && (liftedAt === undefined || state.ban.startedAt <= liftedAt)) {
      state.ban = undefined;
    }
    const at = liftedAt ?? (this.serverTime ? -1 : Date.now());
    await callRedis(this.observer, 'lift', () =>
      this.client.rateLimitLift(1, this.banKey(subject), at, KEY_GRACE_MS),
    );
  }

  async forget(subject: string): Promise<void> {
    const state = this.subjects.get(subject);
    if (state === undefined) return;
    this.subjects.delete(subject);
    await this.giveBack(subject, state.lease);
  }

  async ping(): Promise<void> {
    await callRedis(this.observer, 'ping', () => pingRedis(this.client));
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    clearInterval(this.heartbeat);
    // Unspent leases go back, so the instances that stay have the quota; a Redis that does not
    // answer only strands them until their windows end.
    const held = [...this.subjects].map(([subject, state]) => this.giveBack(subject, state.lease));
    this.subjects.clear();
    await Promise.allSettled(held);
    await closeRedisConnection(this.client);
  }

  /** Asks Redis for a lease of up to `cap` requests, and serves this request from it. */
  private async lease(
    subject: string,
    state: SubjectState,
    request: ConsumeRequest,
    cap: number,
  ): Promise<ConsumeOutcome> {
    const { windows, ban } = request;
    const sentAt = performance.now();
    const size = nextLeaseSize(state, cap, sentAt);
    const previous = state.lease;
    const args: ScriptArgument[] = [
      this.timeArgument(request.now),
      KEY_GRACE_MS,
      ban ? ban.after : -1,
      ban ? ban.durationMs : 0,
      size,
    ];
    for (let i = 0; i < windows.length; i++) {
      const window = windows[i] as LimitWindow;
      // What this instance last saw counted: the floor of a window Redis lost mid-window.
      const known = previous?.lengths[i] === window.lengthMs ? previous : undefined;
      args.push(window.lengthMs, window.limit, known?.numbers[i] ?? -1, known?.floors[i] ?? 0);
    }
    let reply: unknown;
    for (let attempt = 0; ; attempt++) {
      const keys = this.scriptKeys(subject, windows, request.now);
      reply = await callRedis(this.observer, 'lease', () =>
        this.client.rateLimitLease(keys.length, ...keys, ...args),
      );
      const retry = retryAt(reply);
      if (retry === undefined) break;
      this.sawTime(retry, sentAt);
      if (attempt + 1 >= SCRIPT_ATTEMPTS) throw undeclaredWindow(reply);
    }
    const { outcome, granted, restored, now } = parseLease(reply, windows.length);
    this.sawTime(now, sentAt);
    state.size = size;
    state.leasedAt = sentAt;
    state.served = 1;
    state.touchedAt = sentAt;
    if (outcome.kind === 'banned') state.ban = outcome.ban;
    const left = Math.max(0, granted - 1);
    const floors = floorsAfter(previous, outcome.used, restored, now, windows);
    const lease = leaseOf(windows, outcome.used, left, now, floors);
    // The lease replaced (of an ended window, another limit, or held while Redis was quiet) still
    // holds requests counted in every window it was taken from, some of which go on (the day):
    // they go back, and the new lease's counts no longer include them.
    const replaced = state.lease;
    if (replaced !== undefined && replaced.left > 0) {
      const count = replaced.left;
      lease.used = lease.used.map((used, i) =>
        replaced.lengths[i] === lease.lengths[i] && replaced.numbers[i] === lease.numbers[i]
          ? used - count
          : used,
      );
      void this.giveBack(subject, replaced).catch(() => undefined);
    }
    state.lease = lease;
    if (outcome.kind === 'allowed') return { kind: 'allowed', used: usedSeen(state.lease) };
    return outcome;
  }

  /** The answer of a ban known here, or a request served from the lease held here; else none. */
  private decideHere(state: SubjectState, request: ConsumeRequest): ConsumeOutcome | undefined {
    const { windows } = request;
    const now = this.timeOf(request.now);
    if (state.ban !== undefined) {
      if (state.ban.until > now) return this.localBan(state, state.ban, windows, now);
      state.ban = undefined;
    }
    const lease = state.lease;
    if (
      lease !== undefined &&
      lease.left > 0 &&
      leaseFits(lease, windows, now) &&
      this.answering()
    ) {
      lease.left -= 1;
      state.served += 1;
      state.touchedAt = performance.now();
      return { kind: 'allowed', used: usedSeen(lease) };
    }
    return undefined;
  }

  private localBan(
    state: SubjectState,
    ban: LiveBan,
    windows: readonly LimitWindow[],
    now: number,
  ): ConsumeOutcome {
    const lease = state.lease;
    const used = windows.map((window, i) =>
      lease !== undefined && lease.numbers[i] === Math.floor(now / window.lengthMs)
        ? (lease.used[i] ?? 0) - lease.left
        : 0,
    );
    return { kind: 'banned', used, ban, started: false };
  }

  private async giveBack(subject: string, lease: Lease | undefined): Promise<void> {
    if (lease === undefined || lease.left <= 0) return;
    const count = lease.left;
    lease.left = 0;
    const base = this.baseKey(subject);
    const keys = [
      this.banKey(subject),
      ...lease.numbers.map((number, i) => `${base}:${lease.lengths[i]}:${number}`),
    ];
    await callRedis(this.observer, 'give_back', () =>
      this.client.rateLimitGiveBack(keys.length, ...keys, 0, KEY_GRACE_MS, count),
    );
  }

  /** Gives back leases nobody used for a while, and forgets subjects with nothing left to know. */
  private giveBackIdle(): void {
    const idleSince = performance.now() - LEASE_IDLE_MS;
    for (const [subject, state] of this.subjects) {
      if (state.touchedAt > idleSince || state.pending !== undefined) continue;
      if (state.lease !== undefined && state.lease.left > 0) {
        void this.giveBack(subject, state.lease).catch(() => undefined);
      }
    }
  }

  /** The subject's state, now the most recently used; the least recently used make room. */
  private state(subject: string): SubjectState {
    let state = this.subjects.get(subject);
    if (state !== undefined) {
      this.subjects.delete(subject);
    } else {
      state = newState();
      while (this.subjects.size >= MAX_SUBJECTS) {
        const [oldest, dropped] = this.subjects.entries().next().value as [string, SubjectState];
        this.subjects.delete(oldest);
        void this.giveBack(oldest, dropped.lease).catch(() => undefined);
      }
    }
    this.subjects.set(subject, state);
    return state;
  }

  /** Tells whether Redis still answers while leases are held, so they stay spendable. */
  private beat(): void {
    if (this.beating || this.subjects.size === 0 || this.client.status !== 'ready') return;
    this.beating = true;
    const sentAt = performance.now();
    callRedis(this.observer, 'ping', () => pingRedis(this.client))
      .then(() => {
        this.lastAnswerAt = Math.max(this.lastAnswerAt, sentAt);
      })
      .catch(() => undefined)
      .finally(() => {
        this.beating = false;
      });
  }

  /** Whether Redis answered lately on a connection still up: leases are spent only then. */
  private answering(): boolean {
    return this.client.status === 'ready' && performance.now() - this.lastAnswerAt < LEASE_TRUST_MS;
  }

  private timeOf(callerNow: number): number {
    return this.sharedTime ?? callerNow;
  }

  private timeArgument(callerNow: number): number {
    return this.serverTime ? -1 : callerNow;
  }

  /**
   * Notes Redis's clock from a reply to a call sent at `sentAt`: the estimate may run ahead of it
   * by the round trip, never behind, so a lease or a ban ends here no later than in Redis.
   */
  private sawTime(serverNow: number, sentAt: number): number {
    this.lastAnswerAt = Math.max(this.lastAnswerAt, sentAt);
    if (this.serverTime) this.offset = serverNow - sentAt;
    return serverNow;
  }

  private baseKey(subject: string): string {
    return `${this.keyPrefix}{${subject}}`;
  }

  private banKey(subject: string): string {
    return `${this.baseKey(subject)}:ban`;
  }

  /**
   * The keys a script on these windows may touch: the ban key, then each window's key at the time
   * it will run, declared as the script requires (rate-limit-scripts.ts). On the caller's clock
   * that time is known; on Redis's, the windows around the estimate of it here.
   */
  private scriptKeys(
    subject: string,
    windows: readonly LimitWindow[],
    callerNow: number,
  ): string[] {
    const base = this.baseKey(subject);
    const keys = [this.banKey(subject)];
    const estimate = this.sharedTime;
    for (const { lengthMs } of windows) {
      const numbers =
        estimate === undefined
          ? [Math.floor(callerNow / lengthMs)]
          : [
              Math.floor((estimate - WINDOW_MARGIN_MS) / lengthMs),
              Math.floor((estimate + WINDOW_MARGIN_MS) / lengthMs),
            ];
      for (const number of new Set(numbers)) keys.push(`${base}:${lengthMs}:${number}`);
    }
    return keys;
  }
}

/**
 * Opens the store on its own connection. Resolves once the first connection attempt ended: when
 * Redis is down the store is returned anyway; its calls reject with DependencyUnavailableError
 * until Redis returns, and then succeed without a restart.
 */
export async function createRedisRateLimitStore(
  config: RedisConfig,
  options: RedisConnectionOptions = {},
  storeOptions: RedisRateLimitStoreOptions = {},
): Promise<RedisRateLimitStore> {
  const client = openRedisConnection(config, 'petstore-rate-limits', options);
  await firstConnectionAttempt(client, Math.max(config.commandTimeoutMs, 2_000));
  return new RedisRateLimitStore(client, config.keyPrefix, {
    ...storeOptions,
    ...(options.observer !== undefined && { observer: options.observer }),
  });
}

/** The script's `now` when it answered that a window's key was not declared; else undefined. */
function retryAt(reply: unknown): number | undefined {
  if (!Array.isArray(reply) || reply[0] !== 'retry') return undefined;
  const now = Number(reply[1]);
  return Number.isSafeInteger(now) ? now : undefined;
}

function undeclaredWindow(reply: unknown): Error {
  return new Error(
    `the rate-limit script kept finding its window undeclared: ${JSON.stringify(reply)}`,
  );
}

/** An array of integers (of `length` items, when given) from a script reply. */
function counts(value: unknown, length?: number): number[] {
  if (
    !Array.isArray(value) ||
    (length !== undefined && value.length !== length) ||
    !value.every((n): n is number => Number.isSafeInteger(n))
  ) {
    throw new Error(`unexpected counts from the rate-limit script: ${JSON.stringify(value)}`);
  }
  return value;
}

function parseLease(
  reply: unknown,
  windowCount: number,
): { outcome: ConsumeOutcome; granted: number; restored: number[]; now: number } {
  const fail = () => {
    throw new Error(`unexpected reply from the rate-limit script: ${JSON.stringify(reply)}`);
  };
  if (!Array.isArray(reply)) return fail();
  const [kind, usedReply, ...rest] = reply as unknown[];
  const now = Number(rest.pop());
  const restored = counts(rest.pop(), windowCount);
  if (!Number.isSafeInteger(now)) return fail();
  const used = counts(usedReply, windowCount);
  switch (kind) {
    case 'allowed': {
      const granted = Number(rest[0]);
      if (!Number.isSafeInteger(granted) || granted < 1) return fail();
      return { outcome: { kind, used }, granted, restored, now };
    }
    case 'limited':
      return { outcome: { kind, used, refused: counts(rest[0]) }, granted: 0, restored, now };
    case 'banned': {
      const [startedAt, until, started] = rest.map(Number);
      if (!Number.isSafeInteger(startedAt) || !Number.isSafeInteger(until)) return fail();
      const ban = { startedAt: startedAt as number, until: until as number };
      return { outcome: { kind, used, ban, started: started === 1 }, granted: 0, restored, now };
    }
    default:
      return fail();
  }
}

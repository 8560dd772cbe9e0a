import type { ApiKeyRecord } from '../api-keys/api-key.js';
import { ApiKeyService, type KeyRefusalReason } from '../api-keys/api-key-service.js';
import type { KeyUsageCounter } from '../api-keys/key-usage-counter.js';
import type { Scope } from '../api-keys/scopes.js';
import { DependencyUnavailableError } from '../errors.js';
import { andThen, type SyncOrAsync } from '../sync-or-async.js';
import type { Limits } from '../rate-limits/plans.js';
import type {
  RateDecision,
  RateLimiter,
  RateState,
  WindowState,
} from '../rate-limits/rate-limiter.js';

/** What a request says about who sends it, as read from its Authorization header(s). */
export type Credential =
  /** No Authorization header. */
  | { kind: 'absent' }
  /** An Authorization header that holds no bearer token (another scheme, an empty token). */
  | { kind: 'unreadable' }
  /** More than one Authorization header: which one is the key is anyone's guess. */
  | { kind: 'ambiguous' }
  | { kind: 'bearer'; token: string };

/** What the requested operation asks of its callers. */
export interface Operation {
  /**
   * `api_key`: a valid key, counted against its plan (every operation of the API, and any path
   * under it no operation serves). `address`: anyone, counted against the address budget (the
   * API's own description).
   */
  access: 'api_key' | 'address';
  /** Calls to a deprecated operation are counted per key, for operators to see who must move. */
  deprecated?: boolean;
  /** The scope a key needs for it (scopes.ts); none for a path no operation serves. */
  scope?: Scope;
}

export interface AdmissionRequest {
  credential: Credential;
  /** The client address (IPv6 counts by /64). */
  address: string;
  operation: Operation;
}

/** Why a request is turned away, with the facts its answer states. */
export type Refusal =
  | { code: 'unauthorized'; reason: KeyRefusalReason }
  /** A valid key without the scope the operation needs: charged like any request it sent. */
  | { code: 'insufficient_scope'; scope: Scope }
  | { code: 'ambiguous_credential' }
  | {
      code: 'rate_limited';
      /** Whose budget is used up: the key's plan, or the address's (requests without a key). */
      budget: 'key' | 'address';
      /** The window that refused. */
      window: WindowState;
      retryAfterSeconds: number;
    }
  | {
      code: 'api_key_banned';
      /** When the ban ends (epoch ms). */
      until: number;
      retryAfterSeconds: number;
      /** Only on the request that started the ban: whether its durable copy was stored. */
      started?: BanStart;
    };

export type BanStart = { recorded: true } | { recorded: false; error: unknown };

/** The decision on one request. `rate` is what its rate-limit headers describe, either way. */
export type Admission =
  | { admitted: true; rate: RateState; key?: ApiKeyRecord }
  /** `key` is set when a valid key was refused by its own windows or a ban. */
  | { admitted: false; rate: RateState; refusal: Refusal; key?: ApiKeyRecord };

/**
 * An outage met while deciding (the counters or the keys cannot be read). Carries the limits of
 * the budget that was being checked, so the answer can say nothing is left in it until the retry.
 */
export class AdmissionUnavailableError extends DependencyUnavailableError {
  constructor(
    cause: DependencyUnavailableError,
    readonly limits: Limits | undefined,
  ) {
    super(cause.dependency, { cause });
    this.name = 'AdmissionUnavailableError';
  }
}

/**
 * Who gets in, and what they are charged: authenticates the credential, draws on the key's plan
 * windows or on the address budget, starts and records bans, and counts each key's requests per
 * day (admitted and refused). Refusals are values; only an outage throws. The operations that
 * change a key (revoke, unban, ...) are KeyManagementService's.
 */
export class AdmissionService {
  constructor(
    private readonly apiKeys: ApiKeyService,
    private readonly limiter: RateLimiter,
    private readonly usage?: KeyUsageCounter,
  ) {}

  /** The decision on a request: at once when nothing needs waiting for, else a promise of it. */
  admit(request: AdmissionRequest): SyncOrAsync<Admission> {
    return andThen(this.decide(request), this.counted);
  }

  /** Usage per key, in memory until the next flush: a request that named a real key counts. */
  private readonly counted = (admission: Admission): Admission => {
    if (admission.key !== undefined) this.usage?.record(admission.key.id, admission.admitted);
    return admission;
  };

  /**
   * The decision on an operation called with `token`, when it is a key this instance saw valid
   * lately (ApiKeyService's cache): at once unless its counts need a round trip. Undefined, with
   * nothing done, for any other token: admit decides those.
   */
  admitCached(token: string, operation: Operation): SyncOrAsync<Admission> | undefined {
    const decided = this.decideCached(token, operation);
    return decided === undefined ? undefined : andThen(decided, this.counted);
  }

  private decide(request: AdmissionRequest): SyncOrAsync<Admission> {
    const { credential, operation } = request;
    // Most requests: a key seen valid lately, whose counts are at hand.
    if (operation.access === 'api_key' && credential.kind === 'bearer') {
      const decided = this.decideCached(credential.token, operation);
      if (decided !== undefined) return decided;
    }
    return this.decideSlowly(request);
  }

  /** The decision for a token whose key the cache holds as valid; undefined for any other. */
  private decideCached(token: string, operation: Operation): SyncOrAsync<Admission> | undefined {
    const known = this.apiKeys.authenticateCached(token);
    return known?.ok === true ? this.byValidKey(known.key, operation) : undefined;
  }

  private async decideSlowly(request: AdmissionRequest): Promise<Admission> {
    try {
      if (request.operation.access === 'address') {
        return this.byAddress(await this.limiter.hitAddress(request.address));
      }
      const { credential, address } = request;
      if (credential.kind === 'ambiguous') {
        return this.withoutKey(address, { code: 'ambiguous_credential' });
      }
      if (credential.kind === 'unreadable') {
        return this.withoutKey(address, { code: 'unauthorized', reason: 'malformed' });
      }
      let gate: RateDecision | undefined;
      const token = credential.kind === 'bearer' ? credential.token : undefined;
      // The address budget is asked before storage is read for a key this instance has not seen
      // valid lately, so guessing keys stays slow.
      const result = await this.apiKeys.authenticate(token, async () => {
        gate = await this.limiter.peekAddress(address);
        return gate.allowed;
      });
      if (!result.ok) {
        if (result.reason === 'not_looked_up') {
          if (gate === undefined || gate.allowed)
            throw new Error('address gate refused but allowed');
          return this.byAddress(gate);
        }
        // An expired key is refused like any invalid one, and counted in its usage as refused.
        if (result.reason === 'expired') this.usage?.record(result.key.id, false);
        return this.withoutKey(address, { code: 'unauthorized', reason: result.reason });
      }
      return await this.byValidKey(result.key, request.operation);
    } catch (error) {
      throw unavailable(error, undefined);
    }
  }

  /** Draws on a valid key's windows (and counts a deprecated call), at once when it can. */
  private byValidKey(key: ApiKeyRecord, operation: Operation): SyncOrAsync<Admission> {
    const limits = ApiKeyService.limitsOf(key);
    let decision: SyncOrAsync<RateDecision>;
    try {
      decision = this.limiter.hitKey(key, limits);
    } catch (error) {
      throw unavailable(error, limits);
    }
    // Counted once the counters decided: a failed decision counted nothing, so a request the fast
    // path hands to the route after one is counted there, once.
    const deprecated = operation.deprecated === true;
    if (decision instanceof Promise) {
      return decision.then(
        (decided) => {
          if (deprecated) this.apiKeys.recordDeprecatedCall(key.id);
          return this.byKey(key, decided, operation);
        },
        (error: unknown) => {
          throw unavailable(error, limits);
        },
      );
    }
    if (deprecated) this.apiKeys.recordDeprecatedCall(key.id);
    return this.byKey(key, decision, operation);
  }

  /**
   * The address budget's state, without drawing on it: for the refusals made before a request is
   * read whole (bad framing, big headers, a timeout), which never reach a key or a route.
   */
  async addressState(address: string): Promise<RateState> {
    return stateOf(await this.limiter.peekAddress(address));
  }

  /**
   * What the rate-limit headers say while an outage keeps the counters unread: nothing left in the
   * budget until the retry. Rate limiting fails closed, and the headers say so.
   */
  unavailableState(error: DependencyUnavailableError, retryAfterSeconds: number): RateState {
    const limits = error instanceof AdmissionUnavailableError ? error.limits : undefined;
    return this.limiter.unknownState(limits, retryAfterSeconds);
  }

  private byKey(
    key: ApiKeyRecord,
    decision: RateDecision,
    operation: Operation,
  ): SyncOrAsync<Admission> {
    const rate = stateOf(decision);
    if (decision.allowed) {
      // After the charge: the key is known and the request was sent, so it counts (and a key
      // hammering an operation it may not call meets its limits and bans as any other).
      const { scope } = operation;
      if (scope !== undefined && !key.scopes.includes(scope)) {
        return { admitted: false, rate, refusal: { code: 'insufficient_scope', scope }, key };
      }
      return { admitted: true, rate, key };
    }
    if (decision.reason === 'rate_limited') {
      const refusal: Refusal = {
        code: 'rate_limited',
        budget: 'key',
        window: decision.inForce,
        retryAfterSeconds: decision.retryAfterSeconds,
      };
      return { admitted: false, rate, refusal, key };
    }
    const until = decision.bannedUntil ?? decision.decidedAt;
    const banned = (started?: BanStart): Admission => ({
      admitted: false,
      rate,
      refusal: {
        code: 'api_key_banned',
        until,
        retryAfterSeconds: decision.retryAfterSeconds,
        ...(started ? { started } : {}),
      },
      key,
    });
    return decision.banStarted ? this.recordBan(key, until).then(banned) : banned();
  }

  /** Keeps the ban with the key, so it outlives a restart and shows in `keys list`. */
  private async recordBan(key: ApiKeyRecord, until: number): Promise<BanStart> {
    try {
      await this.apiKeys.recordBan(key, until);
      return { recorded: true };
    } catch (error) {
      // The live ban holds in the rate-limit store; only its durable copy failed.
      return { recorded: false, error };
    }
  }

  /** A request without a valid key draws on its address's budget, whatever is wrong with it. */
  private async withoutKey(address: string, refusal: Refusal): Promise<Admission> {
    const decision = await this.limiter.hitAddress(address);
    if (!decision.allowed) return this.byAddress(decision);
    return { admitted: false, rate: stateOf(decision), refusal };
  }

  private byAddress(decision: RateDecision): Admission {
    const rate = stateOf(decision);
    if (decision.allowed) return { admitted: true, rate };
    const refusal: Refusal = {
      code: 'rate_limited',
      budget: 'address',
      window: decision.inForce,
      retryAfterSeconds: decision.retryAfterSeconds,
    };
    return { admitted: false, rate, refusal };
  }
}

/** An outage met while deciding, with the limits of the budget being checked when known. */
function unavailable(error: unknown, limits: Limits | undefined): unknown {
  return error instanceof DependencyUnavailableError &&
    !(error instanceof AdmissionUnavailableError)
    ? new AdmissionUnavailableError(error, limits)
    : error;
}

function stateOf(decision: RateDecision): RateState {
  return { windows: decision.windows, inForce: decision.inForce, decidedAt: decision.decidedAt };
}

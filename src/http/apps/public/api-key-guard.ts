import type { IncomingMessage } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type {
  Admission,
  AdmissionService,
  Credential,
  Operation,
  Refusal,
} from '../../../domain/admission/admission-service.js';
import type { ApiKeyRecord } from '../../../domain/api-keys/api-key.js';
import { DependencyUnavailableError } from '../../../domain/errors.js';
import type { SyncOrAsync } from '../../../domain/sync-or-async.js';
import { UNAVAILABLE_RETRY_AFTER_SECONDS } from '../../errors/error-handler.js';
import { type HttpError, httpErrors } from '../../errors/http-error.js';
import { clientAddress } from '../../../domain/rate-limits/client-address.js';
import type { Metrics } from '../../../telemetry/metrics.js';
import { setRateLimitHeaders } from '../reply-answer.js';
import { type RouteInfo, routeInfo } from '../../route-info.js';
import { requiredScopeOf } from '../../../domain/api-keys/scopes.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified API key; set by the API key guard on every operation of the API scope. */
    apiKey: ApiKeyRecord | undefined;
  }
}

export interface GuardDependencies {
  admission: AdmissionService;
  metrics: Metrics;
  /** `pa_live_` or `pa_test_`: named in the 401 for a malformed key. */
  keyPrefix: string;
}

/**
 * An onRequest hook: lets the request through (`done()`) or answers it (`done(refusal)`). Called
 * back rather than async: most requests are decided at once, and then go on without a promise.
 */
export type Guard = (
  request: FastifyRequest,
  reply: FastifyReply,
  done: (refusal?: Error) => void,
) => void;

/** Decisions made before the guard ran, by the fast path (src/http/fast-path/). */
const handedOver = new WeakMap<IncomingMessage, Admission>();

/**
 * Hands the guard a decision the fast path already made on this request (it was counted then):
 * the guard answers with it rather than asking the admission service a second time.
 */
export function handOverAdmission(request: IncomingMessage, decision: Admission): void {
  handedOver.set(request, decision);
}

/** The guard as a promise that rejects with the refusal, for callers outside a hook chain. */
export function guarded(guard: Guard, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  return new Promise((resolve, reject) =>
    guard(request, reply, (refusal) => (refusal ? reject(refusal) : resolve())),
  );
}

/**
 * How many Authorization header lines the request has. Node keeps only the first of several in
 * `headers` (it drops the others of a header that may appear once), so this counts the raw ones.
 */
function authorizationLines(rawHeaders: readonly string[]): number {
  let lines = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i];
    if (name?.length === 13 && name.toLowerCase() === 'authorization') lines += 1;
  }
  return lines;
}

/**
 * The credential as the request carries it. RFC 6750: the scheme word is case-insensitive; one
 * token follows it. RFC 9110 allows one Authorization field; which of two would be the key is
 * anyone's guess (a proxy may read the other), so neither is tried.
 */
export function credentialOf(request: IncomingMessage): Credential {
  if (authorizationLines(request.rawHeaders) > 1) return { kind: 'ambiguous' };
  const header = request.headers.authorization;
  if (header === undefined) return { kind: 'absent' };
  const token = /^Bearer +([^ ]*) *$/i.exec(header)?.[1];
  return token ? { kind: 'bearer', token } : { kind: 'unreadable' };
}

/**
 * Every request of the API scope, known path or not: asks the admission service, and translates
 * its decision to HTTP (rate-limit headers, and the refusal to throw). `access` names what the
 * route asks of callers: a key (the operations), or nothing but the address budget (the
 * OpenAPI document).
 */
export function createGuard(deps: GuardDependencies, access: Operation['access']): Guard {
  const { admission, metrics, keyPrefix } = deps;
  /** The decision, as headers and as the refusal to answer with. */
  const translate = (request: FastifyRequest, reply: FastifyReply, decision: Admission) => {
    request.apiKey = decision.key;
    setRateLimitHeaders(reply, decision.rate);
    if (decision.admitted) return undefined;
    const { refusal } = decision;
    // A refusal of the address budget has no key, so no plan.
    const plan = decision.key?.plan ?? 'none';
    if (refusal.code === 'rate_limited' || refusal.code === 'api_key_banned') {
      metrics.rateLimited.inc({ code: refusal.code, plan });
    }
    if (refusal.code === 'api_key_banned' && refusal.started !== undefined) {
      const keyId = decision.key?.id;
      metrics.bans.inc({ plan });
      request.log.warn(
        { keyId, bannedUntil: new Date(refusal.until).toISOString() },
        'API key banned for sending requests after 429 responses',
      );
      if (!refusal.started.recorded) {
        request.log.error(
          { err: refusal.started.error, keyId },
          'could not record the ban in storage',
        );
      }
    }
    return httpRefusal(refusal, keyPrefix, request.headers.authorization);
  };
  const outage = (reply: FastifyReply, error: unknown): Error => {
    if (error instanceof DependencyUnavailableError) {
      // Counters or keys cannot be read: the headers say nothing is left until the retry.
      setRateLimitHeaders(
        reply,
        admission.unavailableState(error, UNAVAILABLE_RETRY_AFTER_SECONDS),
      );
    }
    return error instanceof Error ? error : new Error(String(error));
  };
  return function admitRequest(request, reply, done) {
    const finish = (decided: Admission) => {
      let refusal: Error | undefined;
      try {
        refusal = translate(request, reply, decided);
      } catch (error) {
        refusal = outage(reply, error);
      }
      done(refusal);
    };
    const before = handedOver.get(request.raw);
    if (before !== undefined) {
      handedOver.delete(request.raw);
      finish(before);
      return;
    }
    let decision: SyncOrAsync<Admission>;
    try {
      decision = admission.admit({
        credential: access === 'api_key' ? credentialOf(request.raw) : { kind: 'absent' },
        address: clientAddress(request.ip, request.socket.remoteAddress ?? request.ip),
        operation: operationOf(access, routeInfo(request)),
      });
    } catch (error) {
      done(outage(reply, error));
      return;
    }
    if (decision instanceof Promise) {
      decision.then(finish, (error: unknown) => done(outage(reply, error)));
    } else {
      finish(decision);
    }
  };
}

/** What admission needs of the route: its access, whether it is deprecated, its scope. */
function operationOf(access: Operation['access'], info: RouteInfo): Operation {
  const scope = access === 'api_key' ? requiredScopeOf(info.operation) : undefined;
  return scope === undefined
    ? { access, deprecated: info.deprecated }
    : { access, deprecated: info.deprecated, scope };
}

/** The answer to a refusal, from the one factory of its code. */
function httpRefusal(refusal: Refusal, keyPrefix: string, authorization?: string): HttpError {
  switch (refusal.code) {
    case 'unauthorized':
      return refusal.reason === 'expired'
        ? httpErrors.apiKeyExpired()
        : httpErrors.unauthorized(refusal.reason, keyPrefix, authorization);
    case 'ambiguous_credential':
      return httpErrors.duplicateAuthorization();
    case 'insufficient_scope':
      return httpErrors.insufficientScope(refusal.scope);
    case 'api_key_banned':
      return httpErrors.apiKeyBanned(refusal.retryAfterSeconds);
    case 'rate_limited': {
      const { window, retryAfterSeconds } = refusal;
      return refusal.budget === 'key'
        ? httpErrors.keyRateLimited(window.limit, window.name, retryAfterSeconds)
        : httpErrors.addressRateLimited(window.limit, window.name, retryAfterSeconds);
    }
  }
}

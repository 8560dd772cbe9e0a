import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiKeyRecord } from '../domain/api-keys/api-key.js';
import { type AuthResult, ApiKeyService } from '../domain/api-keys/api-key-service.js';
import type { RateDecision, RateLimiter } from '../domain/rate-limits/rate-limiter.js';
import { DependencyUnavailableError } from '../domain/errors.js';
import { UNAVAILABLE_RETRY_AFTER_SECONDS } from './errors/error-handler.js';
import { httpErrors } from './errors/http-error.js';
import type { Metrics } from './plugins/metrics.plugin.js';
import { refusalOf, setRateLimitHeaders } from './rate-limit-headers.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified API key; set by the API key guard on every /v1 operation. */
    apiKey: ApiKeyRecord | undefined;
  }
}

export interface GuardDependencies {
  apiKeys: ApiKeyService;
  limiter: RateLimiter;
  metrics: Metrics;
  /** `pa_live_` or `pa_test_`: named in the 401 for a malformed key. */
  keyPrefix: string;
}

/** An onRequest hook: answers (by throwing) or lets the request through. */
export type Guard = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

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

/** RFC 6750: the scheme word is case-insensitive; one token follows it. */
function bearerToken(header: string | undefined): { token?: string; sent: boolean } {
  if (header === undefined) return { sent: false };
  const match = /^Bearer +([^ ]*) *$/i.exec(header);
  return { token: match?.[1], sent: true };
}

/**
 * Every request under /v1, known path or not: authenticate, then count it. A valid key draws on
 * its plan's limits. Anything else draws on its address's budget, which is checked before storage
 * is read for a key this instance has not seen valid lately, so guessing keys stays slow.
 */
export function createApiKeyGuard(deps: GuardDependencies): Guard {
  const guard = checkKeyAndLimits(deps);
  return async (request, reply) => {
    try {
      await guard(request, reply);
    } catch (error) {
      if (error instanceof DependencyUnavailableError) {
        // Counters or keys cannot be read: the headers say nothing is left until the retry.
        const limits = request.apiKey ? ApiKeyService.limitsOf(request.apiKey) : undefined;
        setRateLimitHeaders(
          reply,
          deps.limiter.unknownState(limits, UNAVAILABLE_RETRY_AFTER_SECONDS),
        );
      }
      throw error;
    }
  };
}

function checkKeyAndLimits(deps: GuardDependencies): Guard {
  const { apiKeys, limiter, metrics, keyPrefix } = deps;
  const refuseWithoutKey = async (
    request: FastifyRequest,
    reply: FastifyReply,
    refusal: () => Error,
    decision?: RateDecision,
  ): Promise<never> => {
    // A request without a valid key draws on its address's budget, whatever is wrong with it.
    decision ??= await limiter.hitAddress(request.ip);
    setRateLimitHeaders(reply, decision);
    if (!decision.allowed) {
      metrics.rateLimited.inc({ code: decision.reason });
      throw refusalOf(decision, 'address');
    }
    throw refusal();
  };
  return async (request, reply) => {
    // RFC 9110 allows one Authorization field; which of two would be the key is anyone's guess
    // (a proxy may read the other), so neither is tried.
    if (authorizationLines(request.raw.rawHeaders) > 1) {
      return refuseWithoutKey(request, reply, httpErrors.duplicateAuthorization);
    }
    const { token, sent } = bearerToken(request.headers.authorization);
    let gate: RateDecision | undefined;
    const result: AuthResult =
      sent && !token
        ? { ok: false, reason: 'malformed' }
        : await apiKeys.authenticate(token, async () => {
            gate = await limiter.peekAddress(request.ip);
            return gate.allowed;
          });

    if (result.ok) {
      request.apiKey = result.key;
      const decision = await limiter.hitKey(result.key, ApiKeyService.limitsOf(result.key));
      setRateLimitHeaders(reply, decision);
      if (decision.allowed) return;
      if (decision.banStarted)
        await recordBan(request, apiKeys, metrics, decision.banStarted.until);
      metrics.rateLimited.inc({ code: decision.reason });
      throw refusalOf(decision, 'key');
    }

    const { reason } = result;
    return refuseWithoutKey(
      request,
      reply,
      () =>
        reason === 'not_looked_up'
          ? new Error('address gate refused but allowed')
          : httpErrors.unauthorized(reason, keyPrefix),
      reason === 'not_looked_up' ? gate : undefined,
    );
  };
}

/** For public routes under /v1 (the OpenAPI document): every request draws on the address budget. */
export function createAddressGuard(limiter: RateLimiter, metrics: Metrics): Guard {
  return async (request, reply) => {
    let decision: RateDecision;
    try {
      decision = await limiter.hitAddress(request.ip);
    } catch (error) {
      if (error instanceof DependencyUnavailableError) {
        setRateLimitHeaders(
          reply,
          limiter.unknownState(undefined, UNAVAILABLE_RETRY_AFTER_SECONDS),
        );
      }
      throw error;
    }
    setRateLimitHeaders(reply, decision);
    if (!decision.allowed) {
      metrics.rateLimited.inc({ code: decision.reason });
      throw refusalOf(decision, 'address');
    }
  };
}

async function recordBan(
  request: FastifyRequest,
  apiKeys: ApiKeyService,
  metrics: Metrics,
  until: number,
): Promise<void> {
  const keyId = request.apiKey?.id ?? 'unknown';
  metrics.bans.inc();
  request.log.warn(
    { keyId, bannedUntil: new Date(until).toISOString() },
    'API key banned for sending requests after 429 responses',
  );
  try {
    await apiKeys.recordBan(keyId, until);
  } catch (error) {
    // The live ban holds in the rate-limit store; only its durable copy failed.
    request.log.error({ err: error, keyId }, 'could not record the ban in storage');
  }
}

import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiKeyRecord } from '../../domain/api-keys/api-key.js';
import { type AuthResult, ApiKeyService } from '../../domain/api-keys/api-key-service.js';
import type { RateDecision, RateLimiter } from '../../domain/rate-limits/rate-limiter.js';
import { HttpError } from '../errors.js';
import type { Metrics } from './metrics.js';
import { refusal, setRateLimitHeaders } from './rate-limit.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified API key; set by the authenticate hook on every /v1 operation. */
    apiKey: ApiKeyRecord | undefined;
  }
}

export interface GuardDependencies {
  apiKeys: ApiKeyService;
  limiter: RateLimiter;
  metrics: Metrics;
}

type Refused = Exclude<AuthResult, { ok: true }>['reason'];

const REALM = 'Bearer realm="pets"';
const MESSAGES: Record<Exclude<Refused, 'not_looked_up'>, string> = {
  missing: 'Missing API key: send it as Authorization: Bearer <key>',
  malformed:
    'API key is not valid: expected Authorization: Bearer pa_live_ followed by 36 letters and digits',
  unknown: 'API key is not valid: check it was copied whole, or create a new one',
  revoked: 'API key has been revoked: create a new one',
};

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
export type Guard = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

export function createGuard(deps: GuardDependencies): Guard {
  const { apiKeys, limiter, metrics } = deps;
  return async (request, reply) => {
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
      throw refusal(decision, metrics, 'key');
    }

    const decision =
      result.reason === 'not_looked_up' && gate ? gate : await limiter.hitAddress(request.ip);
    setRateLimitHeaders(reply, decision);
    if (!decision.allowed) throw refusal(decision, metrics, 'address');
    if (result.reason === 'not_looked_up') throw new Error('address gate refused but allowed');
    const challenge = result.reason === 'missing' ? REALM : `${REALM}, error="invalid_token"`;
    throw new HttpError('unauthorized', MESSAGES[result.reason], {
      'www-authenticate': challenge,
    });
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

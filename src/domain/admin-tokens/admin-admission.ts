import type { Credential } from '../admission/admission-service.js';
import type { RateDecision, RateLimiter, WindowState } from '../rate-limits/rate-limiter.js';
import type { AdminTokenRecord } from './admin-token.js';
import type { AdminTokenService } from './admin-token-service.js';

export type AdminRefusal =
  | { code: 'unauthorized'; reason: 'missing' | 'malformed' | 'unknown' | 'revoked' }
  | { code: 'ambiguous_credential' }
  | { code: 'rate_limited'; window: WindowState; retryAfterSeconds: number };

export type AdminAdmission =
  { admitted: true; token: AdminTokenRecord } | { admitted: false; refusal: AdminRefusal };

/**
 * Who gets in to the admin API. A valid admin token is not rate-limited (operators, not
 * customers); every request without one (no token, a malformed, unknown or revoked one, an API
 * key) draws on a per-address budget as large as the pet API's keyless one but apart from it, so
 * guessing tokens is as slow as guessing keys, past the budget storage is not even read, and keyless
 * requests to the pet API from the same address never refuse a valid admin token.
 */
export class AdminAdmissionService {
  constructor(
    private readonly tokens: AdminTokenService,
    private readonly limiter: RateLimiter,
  ) {}

  async admit(credential: Credential, address: string): Promise<AdminAdmission> {
    if (credential.kind === 'ambiguous') {
      return this.withoutToken(address, { code: 'ambiguous_credential' });
    }
    if (credential.kind === 'unreadable') {
      return this.withoutToken(address, { code: 'unauthorized', reason: 'malformed' });
    }
    let gate: RateDecision | undefined;
    const result = await this.tokens.authenticate(
      credential.kind === 'bearer' ? credential.token : undefined,
      async () => {
        gate = await this.limiter.peekAddress(address, 'admin');
        return gate.allowed;
      },
    );
    if (result.ok) return { admitted: true, token: result.token };
    if (result.reason === 'not_looked_up') {
      if (gate === undefined || gate.allowed) throw new Error('address gate refused but allowed');
      return refusedByAddress(gate);
    }
    return this.withoutToken(address, { code: 'unauthorized', reason: result.reason });
  }

  /** The API's description: anyone, on the address budget. */
  async admitAddress(address: string): Promise<AdminAdmission | { admitted: true }> {
    const decision = await this.limiter.hitAddress(address, 'admin');
    return decision.allowed ? { admitted: true } : refusedByAddress(decision);
  }

  private async withoutToken(address: string, refusal: AdminRefusal): Promise<AdminAdmission> {
    const decision = await this.limiter.hitAddress(address, 'admin');
    if (!decision.allowed) return refusedByAddress(decision);
    return { admitted: false, refusal };
  }
}

function refusedByAddress(decision: RateDecision): AdminAdmission {
  return {
    admitted: false,
    refusal: {
      code: 'rate_limited',
      window: decision.inForce,
      retryAfterSeconds: decision.allowed ? 1 : decision.retryAfterSeconds,
    },
  };
}

import type { Plan } from '../rate-limits/plans.js';

/** Who made a change to a key, as the audit trail records it. */
export type Actor =
  /** `os.userInfo().username` and `os.hostname()` of the CLI process. */
  | { kind: 'cli'; user: string; host: string }
  | { kind: 'admin_token'; id: string }
  /** The service itself: an automatic ban and its end. */
  | { kind: 'system' };

export type PlanChange =
  { plan: 'free' | 'pro' | 'business' } | { plan: 'enterprise'; perMinute: number; perDay: number };

/** The one shape of a key shown to operators: `keys list --json` and the admin API. */
export interface KeyView {
  id: string;
  name: string;
  plan: Plan;
  limits: { perMinute: number; perDay: number };
  /** Display prefix, never the secret. */
  prefix: string;
  state: 'active' | 'revoked' | 'expired' | 'banned';
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
  bannedUntil: string | null;
  /** Rotation grace end, while an old secret still works. */
  previousSecretExpiresAt: string | null;
  deprecatedCalls: number;
}

/** A key with its secret, which is shown once and never stored. */
export interface NewKeyResult {
  key: KeyView;
  secret: string;
}

export interface UsageDay {
  /** YYYY-MM-DD, UTC. */
  day: string;
  admitted: number;
  refused: number;
}

export type AuditAction =
  'create' | 'set_plan' | 'set_expiry' | 'roll' | 'revoke' | 'unban' | 'ban' | 'ban_end';

export interface AuditEntry {
  id: string;
  at: string;
  keyId: string;
  action: AuditAction;
  /** Old and new values; never a secret or a hash. */
  changes: Record<string, { from: unknown; to: unknown }>;
  actor: Actor;
}

/**
 * The operations on a key over its life. The CLI and the admin API call only these; each change
 * is audited with its actor and announced to every instance.
 */
export class KeyManagementService {
  create(
    _input: { change: PlanChange; name?: string; expiresAt?: number | null },
    _actor: Actor,
  ): Promise<NewKeyResult> {
    return Promise.reject(new Error('not yet'));
  }

  list(): Promise<KeyView[]> {
    return Promise.reject(new Error('not yet'));
  }

  get(_keyId: string): Promise<KeyView | undefined> {
    return Promise.reject(new Error('not yet'));
  }

  setPlan(_keyId: string, _change: PlanChange, _actor: Actor): Promise<KeyView> {
    return Promise.reject(new Error('not yet'));
  }

  setExpiry(_keyId: string, _expiresAt: number | null, _actor: Actor): Promise<KeyView> {
    return Promise.reject(new Error('not yet'));
  }

  roll(_keyId: string, _options: { graceMs: number }, _actor: Actor): Promise<NewKeyResult> {
    return Promise.reject(new Error('not yet'));
  }

  revoke(_keyId: string, _actor: Actor): Promise<KeyView> {
    return Promise.reject(new Error('not yet'));
  }

  unban(_keyId: string, _actor: Actor): Promise<KeyView> {
    return Promise.reject(new Error('not yet'));
  }

  usage(_keyId: string, _days: number): Promise<UsageDay[]> {
    return Promise.reject(new Error('not yet'));
  }

  audit(_query: { keyId?: string; since?: number; limit?: number }): Promise<AuditEntry[]> {
    return Promise.reject(new Error('not yet'));
  }
}

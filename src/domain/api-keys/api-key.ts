import type { Limits, Plan } from '../rate-limits/plans.js';
import type { Scope } from './scopes.js';

export type KeyEnvironment = 'production' | 'staging';

/** What storage keeps about a key. Never the key itself: only its SHA-256 and a display prefix. */
export interface ApiKeyRecord {
  /** Public identifier, e.g. `key_8Fq2...`, used by the CLI and in logs (never a metric label). */
  id: string;
  label: string;
  plan: Plan;
  /** Only for enterprise keys: the limits agreed for this key. */
  customLimits?: Limits;
  /** What the key may do (scopes.ts); every scope unless it was made or changed to fewer. */
  scopes: readonly Scope[];
  /** Hex SHA-256 of the full key. */
  hash: string;
  /** First 12 characters of the key, for people to recognise it. */
  displayPrefix: string;
  createdAt: number;
  lastUsedAt?: number;
  revokedAt?: number;
  /** End of a temporary ban (epoch ms), while one is recorded. */
  bannedUntil?: number;
  /** When a ban was last lifted by hand (`keys unban`): ends live bans that started before it. */
  banLiftedAt?: number;
  /**
   * The end of the recorded ban that `keys unban` lifted, as the rate-limit store gave it (its own
   * clock: Redis's): ends that very ban wherever it is live, however the database's clock, which
   * dates `banLiftedAt`, differs from the store's.
   */
  liftedBanUntil?: number;
  /**
   * Calls to deprecated operations (getPet) made with this key and flushed to storage so far: who
   * must migrate before the sunset. Counted here rather than in a metric label, which must never
   * take one value per key.
   */
  deprecatedCalls: number;
  /** From then on (epoch ms) the key is refused as expired; unset: it does not expire. */
  expiresAt?: number;
  /**
   * After a roll: the hash of the secret it replaced, which keeps working until
   * `previousHashExpiresAt`, then is refused as expired (until the next roll forgets it).
   */
  previousHash?: string;
  previousHashExpiresAt?: number;
}

export type NewApiKeyRecord = Omit<
  ApiKeyRecord,
  | 'lastUsedAt'
  | 'revokedAt'
  | 'bannedUntil'
  | 'banLiftedAt'
  | 'liftedBanUntil'
  | 'deprecatedCalls'
  | 'previousHash'
  | 'previousHashExpiresAt'
>;

/** What set-plan, set-scopes, set-expiry and roll change on a stored key; an absent field stays as it is. */
export interface ApiKeyUpdate {
  plan?: Plan;
  /** null clears them (a key leaving enterprise). */
  customLimits?: Limits | null;
  expiresAt?: number | null;
  scopes?: readonly Scope[];
  secret?: {
    hash: string;
    displayPrefix: string;
    previousHash: string | null;
    previousHashExpiresAt: number | null;
  };
}

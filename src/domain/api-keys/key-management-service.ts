import { type Clock, DAY_MS } from '../clock.js';
import { DomainError, domainErrors } from '../errors.js';
import type { ApiKeyStore, KeyAuditStore, KeyUsageStore, Storage } from '../ports.js';
import { type Limits, MAX_CUSTOM_LIMIT, type Plan } from '../rate-limits/plans.js';
import type { RateLimiter } from '../rate-limits/rate-limiter.js';
import { EARLIEST_TIME_MS, LATEST_TIME_MS } from '../rfc3339.js';
import type { ApiKeyRecord, ApiKeyUpdate } from './api-key.js';
import { ApiKeyService } from './api-key-service.js';
import { ALL_SCOPES, parseScopes, type Scope } from './scopes.js';
import {
  decodeKeyCursor,
  encodeKeyCursor,
  KEY_LIST_LIMIT,
  type KeyListShape,
  type KeySort,
  type SortValue,
} from './key-listing.js';
import {
  type Actor,
  type AuditAction,
  type AuditChanges,
  type AuditLog,
  type AuditRecord,
  copyToAuditLog,
  newAuditId,
  SYSTEM_ACTOR,
  utcDay,
} from './key-audit.js';

export type { Actor, AuditAction } from './key-audit.js';

/** The stores a key's life is written to, as the storage adapter provides them. */
export type KeyStores = Pick<Storage, 'apiKeys' | 'keyAudit' | 'keyUsage'>;

export type PlanChange =
  { plan: 'free' | 'pro' | 'business' } | { plan: 'enterprise'; perMinute: number; perDay: number };

/** The one shape of a key shown to operators: `keys list --json` and the admin API. */
export interface KeyView {
  id: string;
  name: string;
  plan: Plan;
  limits: { perMinute: number; perDay: number };
  /** What the key may do, in SCOPES order. */
  scopes: Scope[];
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

export interface AuditEntry {
  id: string;
  at: string;
  keyId: string;
  action: AuditAction;
  /** Old and new values; never a secret or a hash. */
  changes: Record<string, { from: unknown; to: unknown }>;
  actor: Actor;
}

export interface KeyLifeSettings {
  /** Usage is kept this many days (the purge deletes older days); `usage` reads at most this. */
  usageRetentionDays: number;
}

export const DEFAULT_AUDIT_LIMIT = 1_000;
export const MAX_AUDIT_LIMIT = 10_000;
/** Far above any sensible grace: a stray extra digit should not keep an old secret for ages. */
export const MAX_GRACE_MS = 365 * DAY_MS;

function iso(epochMs: number | undefined): string | null {
  return epochMs === undefined ? null : isoTime(epochMs);
}

/**
 * A stored time as RFC 3339, held within the years 1970-9999: a time stored out of that range
 * (before dates were checked strictly) would otherwise have no RFC 3339 form and fail the listing.
 */
function isoTime(epochMs: number): string {
  const at = Number.isFinite(epochMs) ? epochMs : LATEST_TIME_MS;
  return new Date(Math.min(Math.max(at, EARLIEST_TIME_MS), LATEST_TIME_MS)).toISOString();
}

function limitsOf(change: PlanChange): Limits | undefined {
  return change.plan === 'enterprise'
    ? { perMinute: change.perMinute, perDay: change.perDay }
    : undefined;
}

/**
 * What is wrong with a plan change, as the domain error callers get; undefined when it is valid.
 * The CLI asks it before opening the database, so its usage errors word the same rule.
 */
export function planChangeProblem(change: PlanChange): DomainError | undefined {
  const limits = limitsOf(change);
  if (limits === undefined) return undefined;
  const range = `a whole number from 1 to ${MAX_CUSTOM_LIMIT.toLocaleString('en-US')}`;
  for (const [field, value] of [
    ['perMinute', limits.perMinute],
    ['perDay', limits.perDay],
  ] as const) {
    if (!Number.isInteger(value) || value < 1 || value > MAX_CUSTOM_LIMIT) {
      return domainErrors.invalidKeyField(field, `${range} (got ${String(value)})`);
    }
  }
  if (limits.perMinute > limits.perDay) {
    return domainErrors.invalidKeyField(
      'perMinute',
      `at most perDay (${limits.perDay}); got ${limits.perMinute}`,
    );
  }
  return undefined;
}

/** The state an operator sees: revoked outranks expired, which outranks a ban. */
export function toKeyView(record: ApiKeyRecord, now: number): KeyView {
  const limits =
    record.plan === 'enterprise' && record.customLimits === undefined
      ? { perMinute: 0, perDay: 0 }
      : ApiKeyService.limitsOf(record);
  let state: KeyView['state'] = 'active';
  if (record.revokedAt !== undefined) state = 'revoked';
  else if (record.expiresAt !== undefined && now >= record.expiresAt) state = 'expired';
  else if (record.bannedUntil !== undefined && record.bannedUntil > now) state = 'banned';
  const grace = record.previousHashExpiresAt;
  return {
    id: record.id,
    name: record.label,
    plan: record.plan,
    limits: { perMinute: limits.perMinute, perDay: limits.perDay },
    scopes: [...record.scopes],
    prefix: record.displayPrefix,
    state,
    createdAt: isoTime(record.createdAt),
    lastUsedAt: iso(record.lastUsedAt),
    expiresAt: iso(record.expiresAt),
    revokedAt: iso(record.revokedAt),
    bannedUntil:
      record.bannedUntil !== undefined && record.bannedUntil > now ? iso(record.bannedUntil) : null,
    previousSecretExpiresAt:
      record.previousHash !== undefined && grace !== undefined && grace > now ? iso(grace) : null,
    deprecatedCalls: record.deprecatedCalls,
  };
}

/** A record's value in the listing's order, as the store's index holds it. */
function sortValue(record: ApiKeyRecord, sort: KeySort): SortValue {
  switch (sort) {
    case 'created':
      return record.createdAt;
    case 'label':
      return record.label;
    case 'lastUsed':
      return record.lastUsedAt ?? 0;
  }
}

function limitsChange(record: ApiKeyRecord): { perMinute: number; perDay: number } | null {
  return record.plan === 'enterprise' && record.customLimits === undefined
    ? null
    : { ...ApiKeyService.limitsOf(record) };
}

/**
 * The operations on a key over its life. The CLI and the admin API call only these. Every change
 * is written with its audit record in one transaction (actor, old and new values, never a secret
 * or hash), dropped from this instance's key cache and announced to the others, whose caches drop
 * it at once (Redis) or within the cache lifetime.
 */
export class KeyManagementService {
  /** Reads and tries of one change before it answers key_changed. */
  static readonly CHANGE_ATTEMPTS = 3;
  private readonly store: ApiKeyStore;
  private readonly auditStore: KeyAuditStore;
  private readonly usageStore: KeyUsageStore;

  constructor(
    stores: KeyStores,
    private readonly apiKeys: ApiKeyService,
    private readonly limiter: Pick<RateLimiter, 'liftBan'>,
    private readonly clock: Clock,
    private readonly settings: KeyLifeSettings,
    /** Each committed audit record is also written here (a log line outside the database). */
    private readonly auditLog?: AuditLog,
  ) {
    this.store = stores.apiKeys;
    this.auditStore = stores.keyAudit;
    this.usageStore = stores.keyUsage;
  }

  async create(
    input: {
      change: PlanChange;
      name?: string;
      expiresAt?: number | null;
      /** A list or a comma list; every scope when absent. */
      scopes?: string | readonly string[];
    },
    actor: Actor,
  ): Promise<NewKeyResult> {
    const problem = planChangeProblem(input.change);
    if (problem !== undefined) throw problem;
    const scopes = input.scopes === undefined ? ALL_SCOPES : parseScopes(input.scopes);
    const customLimits = limitsOf(input.change);
    const expiresAt = input.expiresAt ?? undefined;
    let created: AuditRecord | undefined;
    const { record, key } = await this.apiKeys.create(
      {
        plan: input.change.plan,
        label: input.name ?? '',
        ...(customLimits ? { customLimits } : {}),
        ...(expiresAt !== undefined ? { expiresAt } : {}),
        scopes,
      },
      (fresh) =>
        (created = this.auditRecord(fresh.id, 'create', actor, {
          name: { from: null, to: fresh.label },
          plan: { from: null, to: fresh.plan },
          limits: {
            from: null,
            to: customLimits ?? ApiKeyService.limitsOf({ ...fresh, deprecatedCalls: 0 }),
          },
          expiresAt: { from: null, to: iso(fresh.expiresAt) },
          scopes: { from: null, to: [...fresh.scopes] },
        })),
    );
    if (created !== undefined) copyToAuditLog(this.auditLog, created);
    return { key: toKeyView(record, this.clock.now()), secret: key };
  }

  async list(): Promise<KeyView[]> {
    const now = this.clock.now();
    return (await this.store.list()).map((record) => toKeyView(record, now));
  }

  /**
   * One page of keys, filtered and sorted as asked, with the cursor of the next page when more
   * keys follow. `state` is judged now, as the views are.
   */
  async page(
    shape: KeyListShape & { limit: number; cursor?: string },
  ): Promise<{ keys: KeyView[]; next: string | undefined }> {
    const { limit, cursor, ...listing } = shape;
    if (!Number.isInteger(limit) || limit < KEY_LIST_LIMIT.min || limit > KEY_LIST_LIMIT.max) {
      throw new DomainError(
        'invalid_parameter',
        `limit must be a whole number from ${KEY_LIST_LIMIT.min} to ${KEY_LIST_LIMIT.max}`,
      );
    }
    const now = this.clock.now();
    const after = cursor === undefined ? undefined : decodeKeyCursor(cursor, listing);
    const records = await this.store.page({
      ...listing,
      limit: limit + 1,
      now,
      ...(after === undefined ? {} : { after }),
    });
    const shown = records.slice(0, limit);
    const last = shown.at(-1);
    const next =
      records.length > limit && last !== undefined
        ? encodeKeyCursor(listing, { value: sortValue(last, listing.sort), id: last.id })
        : undefined;
    return { keys: shown.map((record) => toKeyView(record, now)), next };
  }

  async get(keyId: string): Promise<KeyView | undefined> {
    const record = await this.store.findById(keyId);
    return record === undefined ? undefined : toKeyView(record, this.clock.now());
  }

  /**
   * New limits for the same key: the counters are the key's, not its plan's, so what was counted
   * in the current minute and day stays counted against the new limits.
   */
  async setPlan(keyId: string, change: PlanChange, actor: Actor): Promise<KeyView> {
    const problem = planChangeProblem(change);
    if (problem !== undefined) throw problem;
    const customLimits = limitsOf(change) ?? null;
    const update: ApiKeyUpdate = { plan: change.plan, customLimits };
    return this.change(keyId, 'set_plan', actor, (before) => {
      const limitsAfter = customLimits ?? ApiKeyService.limitsOf({ ...before, plan: change.plan });
      return {
        update,
        changes: {
          plan: { from: before.plan, to: change.plan },
          limits: { from: limitsChange(before), to: { ...limitsAfter } },
        },
      };
    });
  }

  /**
   * What the key may do from now on (at least one scope). Every instance's cache drops the key as
   * for a plan change, so the next request is judged by the new scopes there too.
   */
  async setScopes(
    keyId: string,
    scopes: string | readonly string[],
    actor: Actor,
  ): Promise<KeyView> {
    const after = parseScopes(scopes);
    return this.change(keyId, 'set_scopes', actor, (before) => ({
      update: { scopes: after },
      changes: { scopes: { from: [...before.scopes], to: [...after] } },
    }));
  }

  /** `null`: the key never expires. A time in the past expires it at once. */
  async setExpiry(keyId: string, expiresAt: number | null, actor: Actor): Promise<KeyView> {
    if (expiresAt !== null && !Number.isFinite(expiresAt)) {
      throw domainErrors.invalidKeyField('expiresAt', 'a time (RFC 3339) or null');
    }
    return this.change(keyId, 'set_expiry', actor, (before) => ({
      update: { expiresAt },
      changes: {
        expiresAt: { from: iso(before.expiresAt), to: expiresAt === null ? null : iso(expiresAt) },
      },
    }));
  }

  /**
   * A new secret for the same key record (same id, plan, limits, counters, ban state); the old
   * one works until the grace ends, then is refused as expired. An older previous secret, if any,
   * is forgotten.
   */
  async roll(keyId: string, options: { graceMs: number }, actor: Actor): Promise<NewKeyResult> {
    const { graceMs } = options;
    if (!Number.isInteger(graceMs) || graceMs < 0 || graceMs > MAX_GRACE_MS) {
      throw domainErrors.invalidKeyField('grace', 'from 0 to 365 days');
    }
    const secret = this.apiKeys.newSecret();
    const view = await this.change(keyId, 'roll', actor, (before) => {
      if (before.revokedAt !== undefined) throw domainErrors.keyRevoked(keyId);
      const graceEnd = this.clock.now() + graceMs;
      return {
        update: {
          secret: {
            hash: secret.hash,
            displayPrefix: secret.displayPrefix,
            previousHash: before.hash,
            previousHashExpiresAt: graceEnd,
          },
        },
        changes: {
          prefix: { from: before.displayPrefix, to: secret.displayPrefix },
          previousSecretExpiresAt: {
            from: before.previousHash === undefined ? null : iso(before.previousHashExpiresAt),
            to: iso(graceEnd),
          },
        },
      };
    });
    this.apiKeys.knowHash(secret.hash);
    return { key: view, secret: secret.key };
  }

  /** For good: revoking twice keeps (and audits) only the first. */
  async revoke(keyId: string, actor: Actor): Promise<KeyView> {
    const wasRevoked = (await this.store.findById(keyId))?.revokedAt !== undefined;
    const now = this.clock.now();
    const audit = this.auditRecord(keyId, 'revoke', actor, {
      revokedAt: { from: null, to: iso(now) },
    });
    if (!(await this.store.revoke(keyId, now, audit))) throw domainErrors.keyNotFound(keyId);
    const view = await this.viewAfterChange(keyId);
    // Only the revocation that took effect kept its record: the first, whose time is the key's.
    if (!wasRevoked && view.revokedAt === iso(now)) copyToAuditLog(this.auditLog, audit);
    return view;
  }

  /**
   * Lifts a key's ban early: clears the recorded ban, ends the live one in the rate-limit store
   * (at once for every instance sharing it), and tells the other instances. The time of the lift
   * is the store's to choose (the database's clock where servers share it), not this host's.
   */
  async unban(keyId: string, actor: Actor): Promise<KeyView> {
    const before = await this.existing(keyId);
    // With no ban in force nothing changes, so nothing is audited (an entry `null -> null` says
    // nothing); the lift is still stored and sent, for a ban a server holds and has not written yet.
    const banned = before.bannedUntil !== undefined && before.bannedUntil > this.clock.now();
    const audit = banned
      ? this.undatedAuditRecord(keyId, 'unban', actor, {
          bannedUntil: { from: iso(before.bannedUntil), to: null },
        })
      : undefined;
    const liftedAt = await this.store.liftBan(keyId, this.clock.now(), audit);
    if (liftedAt === undefined) throw domainErrors.keyNotFound(keyId);
    if (audit !== undefined) copyToAuditLog(this.auditLog, { ...audit, at: liftedAt });
    // Best effort: a store this process cannot reach (or its own, in memory) is lifted by each
    // server when it reads the key's unban time, within the key cache lifetime.
    await this.limiter.liftBan(keyId).catch(() => undefined);
    return this.viewAfterChange(keyId);
  }

  /**
   * The last `days` UTC days up to today, oldest first, every day listed (0 where nothing was
   * counted). Counts reach the database when a server flushes them (PETSTORE_USAGE_FLUSH_SECONDS).
   */
  async usage(keyId: string, days: number): Promise<UsageDay[]> {
    const max = this.settings.usageRetentionDays;
    if (!Number.isInteger(days) || days < 1 || days > max) {
      throw new DomainError('invalid_parameter', `days must be a whole number from 1 to ${max}`);
    }
    await this.existing(keyId);
    const today = Math.floor(this.clock.now() / DAY_MS) * DAY_MS;
    const first = today - (days - 1) * DAY_MS;
    const rows = await this.usageStore.days(keyId, utcDay(first), utcDay(today));
    const byDay = new Map(rows.map((row) => [row.day, row]));
    const out: UsageDay[] = [];
    for (let at = first; at <= today; at += DAY_MS) {
      const day = utcDay(at);
      const row = byDay.get(day);
      out.push({ day, admitted: row?.admitted ?? 0, refused: row?.refused ?? 0 });
    }
    return out;
  }

  async audit(query: {
    keyId?: string;
    since?: number;
    limit?: number;
    order?: 'asc' | 'desc';
  }): Promise<AuditEntry[]> {
    const limit = query.limit ?? DEFAULT_AUDIT_LIMIT;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_AUDIT_LIMIT) {
      throw new DomainError(
        'invalid_parameter',
        `limit must be a whole number from 1 to ${MAX_AUDIT_LIMIT}`,
      );
    }
    const records = await this.auditStore.list({
      ...(query.keyId !== undefined ? { keyId: query.keyId } : {}),
      ...(query.since !== undefined ? { since: query.since } : {}),
      ...(query.order !== undefined ? { order: query.order } : {}),
      limit,
    });
    return records.map((record) => ({
      id: record.id,
      at: isoTime(record.at),
      keyId: record.keyId,
      action: record.action,
      changes: record.changes,
      actor: record.actor,
    }));
  }

  /**
   * Records the end of bans that ran out (the system's doing), once however many instances sweep
   * at the same time: the audit record's id is made of the key and the ban's end. Returns how many.
   */
  async recordEndedBans(limit = 100): Promise<number> {
    const ended = await this.store.endedBans(this.clock.now(), limit);
    for (const { id, bannedUntil } of ended) {
      const audit: AuditRecord = {
        id: `aud_ban_end_${id}_${bannedUntil}`,
        at: bannedUntil,
        keyId: id,
        action: 'ban_end',
        changes: { bannedUntil: { from: iso(bannedUntil), to: null } },
        actor: SYSTEM_ACTOR,
      };
      await this.store.clearEndedBan(id, bannedUntil, audit);
      // Instances sweeping together may each write the line; its id says it is the same record.
      copyToAuditLog(this.auditLog, audit);
      this.apiKeys.forget(id);
    }
    return ended.length;
  }

  /** Deletes usage days older than the retention; returns how many rows went. */
  purgeUsage(): Promise<number> {
    const today = Math.floor(this.clock.now() / DAY_MS) * DAY_MS;
    return this.usageStore.purgeBefore(
      utcDay(today - (this.settings.usageRetentionDays - 1) * DAY_MS),
    );
  }

  private async existing(keyId: string): Promise<ApiKeyRecord> {
    const record = await this.store.findById(keyId);
    if (record === undefined) throw domainErrors.keyNotFound(keyId);
    return record;
  }

  /**
   * Reads the key, decides the change from what it read (the audit's "from" values too), and
   * stores it only if the key still holds what was read. Another change landing in between (two
   * rolls at once: both would keep the same old secret as "previous", and the first caller's new
   * secret would work nowhere) makes it read again and decide again, a few times, then give up.
   */
  private async change(
    keyId: string,
    action: AuditAction,
    actor: Actor,
    decide: (before: ApiKeyRecord) => { update: ApiKeyUpdate; changes: AuditChanges },
  ): Promise<KeyView> {
    for (let attempt = 0; attempt < KeyManagementService.CHANGE_ATTEMPTS; attempt++) {
      const before = await this.existing(keyId);
      const { update, changes } = decide(before);
      const audit = this.auditRecord(keyId, action, actor, changes);
      if (await this.store.update(keyId, update, audit, before)) {
        copyToAuditLog(this.auditLog, audit);
        return this.viewAfterChange(keyId);
      }
    }
    // The last read found the key, so it is there unless it was deleted since: say which.
    await this.existing(keyId);
    throw domainErrors.keyChanged(keyId);
  }

  /** After a change: out of this cache, announced to the others, read back as stored. */
  private async viewAfterChange(keyId: string): Promise<KeyView> {
    this.apiKeys.forget(keyId);
    await this.apiKeys.announce(keyId);
    const record = await this.existing(keyId);
    return toKeyView(record, this.clock.now());
  }

  private auditRecord(
    keyId: string,
    action: AuditAction,
    actor: Actor,
    changes: AuditChanges,
  ): AuditRecord {
    return { ...this.undatedAuditRecord(keyId, action, actor, changes), at: this.clock.now() };
  }

  private undatedAuditRecord(
    keyId: string,
    action: AuditAction,
    actor: Actor,
    changes: AuditChanges,
  ): Omit<AuditRecord, 'at'> {
    return { id: newAuditId(), keyId, action, changes, actor };
  }
}

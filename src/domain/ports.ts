import type { AdminIdempotencyStore, AdminTokenStore } from './admin-tokens/admin-token.js';
import type {
  ApiKeyRecord,
  ApiKeyUpdate,
  KeyEnvironment,
  NewApiKeyRecord,
} from './api-keys/api-key.js';
import type { AuditAction, AuditRecord, UsageCount } from './api-keys/key-audit.js';
import type { KeyListQuery } from './api-keys/key-listing.js';
import type { NewPet, Pet, PetStatus } from './pets/pet.js';

export type { Clock } from './clock.js';

/** Identifies one idempotent request: the Idempotency-Key value, scoped to the API key that sent it. */
export interface IdempotencyScope {
  apiKeyId: string;
  key: string;
}

/** A create sent with an Idempotency-Key. */
export interface IdempotentCreate {
  scope: IdempotencyScope;
  /** Of the request body: the same JSON value gives the same fingerprint. */
  fingerprint: string;
  now: number;
  /** A record older than this counts as absent: the key may be used for a new pet. */
  retentionMs: number;
}

export type IdempotentOutcome =
  /** The key was free (or its record expired): the pet was created and the key points at it. */
  | { kind: 'created'; pet: Pet }
  /** The key already created this pet with the same fingerprint: nothing new was created. */
  | { kind: 'replay'; petId: number }
  /** The key already created a pet from another body. */
  | { kind: 'mismatch' }
  /** Another request holding the key has not finished yet (it may still fail or succeed). */
  | { kind: 'in_progress' };

export interface PetStore {
  /** Pets with id > afterId (and the status, when given), ordered by id ascending, at most `limit`. */
  list(query: { afterId: number; status?: PetStatus; limit: number }): Promise<Pet[]>;
  /**
   * The same read, answered now: only a store that reads synchronously (SQLite) has it, so that a
   * page can be answered without waiting a turn (src/http/fast-path/fast-path.ts). Throws what `list`
   * would reject with.
   */
  listNow?(query: { afterId: number; status?: PetStatus; limit: number }): Pet[];
  /** The pet, or undefined. `id` may be any int64; ids above MAX_PET_ID simply do not exist. */
  get(id: bigint): Promise<Pet | undefined>;
  /** Inserts the pet and resolves only after its transaction committed. */
  create(input: NewPet): Promise<Pet>;
  /**
   * Takes the Idempotency-Key and inserts the pet in ONE transaction that also points the key's
   * record at the pet, so a crash never leaves a key without its pet or a pet without its key,
   * and a retry after a crash finds the key free at once. A key held by a request that has not
   * committed yet is in_progress; one completed within retention is a replay or a mismatch.
   */
  createIdempotent(input: NewPet, request: IdempotentCreate): Promise<IdempotentOutcome>;
  /**
   * Every pet with an id at or below this that will ever exist is visible now. Where ids are
   * assigned in commit order (SQLite) that is any id; where they are taken before commit
   * (PostgreSQL) it lags behind by the longest a transaction can take, and starts again from 0
   * when the store generation changes. Synchronous: no I/O.
   */
  idHorizon(): number;
  /** Bulk insert for `petstore seed`, all or nothing; returns how many were inserted. */
  insertMany(inputs: readonly NewPet[]): Promise<number>;
}

/**
 * Names the state of the stored data that this instance's caches were taken from
 * (src/domain/cache/store-cache.ts). Two reads give the same value only when nothing came between
 * them that may change stored data in place: a restore, a migration, an explicit bump (`petstore
 * cache-reset`), or anything else the backend can detect (see docs/caching.md).
 */
/** One read of the store generation. */
export interface GenerationReading {
  /** The generation of the stored data. */
  readonly data: string;
  /**
   * A count that moves with every change to a key that a key cache holds (plan, limits, secret,
   * revocation, expiry, lifted ban), by whatever writer, read in the same query.
   */
  readonly keys: string;
}

export interface StoreGeneration {
  /**
   * Reads the generation from the database now. Called about once a second by every serving
   * instance; a backend may piggy-back its own once-a-second bookkeeping on it (PostgreSQL: the
   * id horizon of PetStore.idHorizon, which it resets when the generation changes).
   */
  read(): Promise<GenerationReading>;
  /** Starts a new generation: every instance invalidates its caches at its next read. */
  bump(): Promise<void>;
}

export interface IdempotencyStore {
  /**
   * Deletes at most `limit` (>= 1) records created at or before `before` (epoch ms), oldest first,
   * and returns how many it deleted. Bounded so that a large backlog is purged in short
   * transactions; instances purging at the same time neither wait for each other nor count a
   * record twice.
   */
  purgeExpired(before: number, limit: number): Promise<number>;
}

/**
 * Keys, and the audit trail of their changes: every method that changes a key takes the audit
 * record of the change and appends it in the same transaction, or not at all when nothing changed.
 */
export interface ApiKeyStore {
  insert(record: NewApiKeyRecord, audit?: AuditRecord): Promise<ApiKeyRecord>;
  /**
   * Inserts the key only when the store holds no key at all, and says whether it did. Atomic: of
   * several instances calling it at once on an empty store, exactly one gets true.
   */
  insertIfNone(record: NewApiKeyRecord, audit?: AuditRecord): Promise<boolean>;
  /** By the hash of its current secret, or of its previous one (after a roll). */
  findByHash(hash: string): Promise<ApiKeyRecord | undefined>;
  findById(id: string): Promise<ApiKeyRecord | undefined>;
  /** Oldest first. */
  list(): Promise<ApiKeyRecord[]>;
  /**
   * One page of keys in the order and under the filter asked (src/domain/api-keys/key-listing.ts),
   * read through an index rather than by sorting every key.
   */
  page(query: KeyListQuery): Promise<ApiKeyRecord[]>;
  /**
   * Hashes of the keys whose `seq` is above the given one, revoked ones included, by ascending
   * `seq`. The store allocates `seq` on insert, increasing, whatever the inserting host's clock
   * says; 0 asks for every key.
   */
  hashesAfter(seq: number): Promise<Array<{ hash: string; seq: number }>>;
  count(): Promise<number>;
  /**
   * Applies the changes and appends the audit record, in one transaction. Returns false (and
   * appends nothing) when no such key exists, or, given `read`, when the key no longer holds what
   * `read` saw of it (plan, limits, expiry, secrets, revocation): a change decided from a read
   * applies only to what was read, whatever else writes the key meanwhile.
   */
  update(
    id: string,
    update: ApiKeyUpdate,
    audit: AuditRecord,
    read?: ApiKeyRecord,
  ): Promise<boolean>;
  /**
   * Returns false when no such key exists. Revoking twice keeps the first timestamp, and only the
   * revocation that took effect appends its audit record.
   */
  revoke(id: string, at: number, audit?: AuditRecord): Promise<boolean>;
  touch(id: string, at: number): Promise<void>;
  /**
   * Adds each count to its key's `deprecatedCalls`, all in one transaction; ids of keys that do
   * not exist are skipped.
   */
  addDeprecatedCalls(counts: ReadonlyArray<{ id: string; calls: number }>): Promise<void>;
  /**
   * Records a temporary ban. The rate-limit store keeps the live ban; this copy survives restarts
   * and shows in `petstore keys list`. Returns false when no such key exists.
   */
  setBannedUntil(id: string, until: number, audit?: AuditRecord): Promise<boolean>;
  /**
   * Lifts a ban (`petstore keys unban`): clears `bannedUntil` and sets `banLiftedAt`, which every
   * instance reads through its key cache to end live bans that started at or before it. Servers
   * compare that time with their own clocks, so it is the database's where servers on several
   * hosts share it (PostgreSQL): a caller whose clock is behind would otherwise date the lift
   * before the ban and leave it in force. Elsewhere it is `callerNow`. The audit record is
   * appended at the same time. Resolves that time, or undefined when no key has the id.
   */
  liftBan(
    id: string,
    callerNow: number,
    audit?: Omit<AuditRecord, 'at'>,
  ): Promise<number | undefined>;
  /** Recorded bans that ended at or before `now`, at most `limit`. */
  endedBans(now: number, limit: number): Promise<Array<{ id: string; bannedUntil: number }>>;
  /**
   * Clears a recorded ban that ended, when it is still the one recorded, and appends its audit
   * record once however many instances do it at the same time (the record's id decides).
   */
  clearEndedBan(id: string, bannedUntil: number, audit: AuditRecord): Promise<void>;
}

/** The audit trail, read-only here: records are appended only with the change they describe. */
export interface KeyAuditStore {
  /** Oldest first (newest first with `order: 'desc'`); `since` (epoch ms) inclusive; at most `limit`. */
  list(query: {
    keyId?: string;
    since?: number;
    limit: number;
    order?: 'asc' | 'desc';
  }): Promise<AuditRecord[]>;
}

export type { AuditAction, AuditRecord, UsageCount };

/** Requests per key and UTC day, admitted and refused, written in batches. */
export interface KeyUsageStore {
  /** Adds the counts to their days, all in one transaction (one row per key and day). */
  add(counts: readonly UsageCount[]): Promise<void>;
  /** The days of one key from `fromDay` to `toDay` (YYYY-MM-DD, inclusive) that have counts. */
  days(keyId: string, fromDay: string, toDay: string): Promise<UsageCount[]>;
  /** Deletes the counts of days before `day`; returns how many rows it deleted. */
  purgeBefore(day: string): Promise<number>;
}

/**
 * The settings of the live connection that decide what survives a crash or a power cut, by the
 * engine's own names and values (SQLite: journal_mode, synchronous; PostgreSQL: fsync,
 * synchronous_commit). For the start line of the log and for tests; nothing depends on them.
 */
export type DurabilitySettings = Readonly<Record<string, string | number>>;

export type BackupOutcome =
  /** The copy is complete and on disk under the name asked for. */
  | { kind: 'copied'; pages: number; pageSize: number; bytes: number }
  /** A file of that name exists and overwriting it was not asked for; nothing was written. */
  | { kind: 'exists' }
  /** The name is the database itself (or its -wal or -shm file); nothing was written. */
  | { kind: 'is_source' };

export interface CloseOptions {
  /** Milliseconds from now after which writes still waiting are failed rather than waited for. */
  deadlineMs?: number;
}

/** Everything one database backend provides. */
export interface Storage {
  readonly backend: 'sqlite' | 'postgres';
  readonly pets: PetStore;
  readonly apiKeys: ApiKeyStore;
  readonly keyAudit: KeyAuditStore;
  readonly keyUsage: KeyUsageStore;
  readonly idempotency: IdempotencyStore;
  /** The admin API's credentials and its Idempotency-Keys. */
  readonly adminTokens: AdminTokenStore;
  readonly adminIdempotency: AdminIdempotencyStore;
  readonly generation: StoreGeneration;
  /**
   * Applies pending migrations and says what it did, a line each; safe to call on every start.
   * Applying any bumps the store generation.
   */
  migrate(): Promise<string[]>;
  /**
   * The PETSTORE_ENV the database belongs to; with `claim`, recorded first when none is. Undefined
   * when none is recorded (or the schema predates the record). Databases only: memory has none.
   */
  environment?(claim: KeyEnvironment | undefined): Promise<KeyEnvironment | undefined>;
  /** Resolves when the database answers a trivial query. */
  ping(): Promise<void>;
  /**
   * Refreshes the planner's statistics after a bulk load (`petstore seed`), so that queries use
   * their indexes at once rather than once the database gets round to it.
   */
  analyze(): Promise<void>;
  /** Reads the durability settings back from the database connection. */
  durability(): Promise<DurabilitySettings>;
  /**
   * Writes a consistent copy of the whole database (one snapshot) to the file `destination`,
   * created readable by its owner only, while requests keep reading and writing. Atomic: the
   * file appears complete or not at all, and an existing file is replaced only with `overwrite`.
   * Only where the service keeps the database itself (SQLite); an engine with its own backup
   * tools (PostgreSQL: pg_dump, point-in-time recovery) leaves it out.
   */
  backup?(destination: string, options: { overwrite: boolean }): Promise<BackupOutcome>;
  /**
   * Delivers now the replies of writes whose commit has ended but whose reply has not been taken yet; cheap
   * when there is none. The server calls it as each request arrives, so that an acknowledged
   * write does not wait for the event loop's next poll. Only where commits end off the event loop
   * (SQLite's commit worker).
   */
  pollCommitReplies?(): void;
  /**
   * Finishes the writes under way, then closes. With `deadlineMs`, writes still waiting then (for
   * a lock, a stalled disk) fail with DependencyUnavailableError (503) and the close goes on, so
   * a shutdown is never held longer than that.
   */
  close(options?: CloseOptions): Promise<void>;
}

/** One fixed window of a limit, aligned to the Unix epoch and so to UTC minutes and days. */
export interface LimitWindow {
  /** Names the window in the `RateLimit` headers: `minute`, `day`, ... */
  name: string;
  limit: number;
  lengthMs: number;
}

export interface ConsumeRequest {
  /** Whose budget: `key:<id>` or `addr:<address>`. */
  subject: string;
  windows: readonly LimitWindow[];
  now: number;
  /** For keys: refusals past `after` in one window start a ban of `durationMs`. */
  ban?: { after: number; durationMs: number };
}

export interface LiveBan {
  startedAt: number;
  until: number;
}

/** `used` holds, per window in request order, how many requests that window has counted. */
export type ConsumeOutcome =
  | { kind: 'allowed'; used: number[] }
  /** Refused by the windows at these indexes; nothing was counted. */
  | { kind: 'limited'; used: number[]; refused: number[] }
  /** Refused by a ban; `started` is true for the request that began it. */
  | { kind: 'banned'; used: number[]; ban: LiveBan; started: boolean };

/**
 * Counters and live bans. `consume` is atomic over all windows of a request: when any window is
 * full, none is incremented (also across instances for shared stores).
 */
export interface RateLimitStore {
  readonly backend: 'memory' | 'redis';
  consume(request: ConsumeRequest): Promise<ConsumeOutcome>;
  /**
   * consume's outcome when this instance can tell it at once, alone (counters in its memory, a
   * quota leased here, a ban known here); undefined, with nothing counted, when only consume can.
   * The request path asks it first, so that most requests wait for no promise.
   */
  consumeNow(request: ConsumeRequest): ConsumeOutcome | undefined;
  /** What each window has counted, counting nothing. */
  peek(subject: string, windows: readonly LimitWindow[], now: number): Promise<number[]>;
  /**
   * Ends a live ban that started at or before `liftedAt` (by default: now, on the store's clock),
   * and forgets refusals counted so far.
   */
  lift(subject: string, liftedAt?: number): Promise<void>;
  /**
   * Drops what this instance holds of a subject (a leased quota, a ban it knows of) because its
   * key changed elsewhere: revoked, unbanned, another plan. The shared counts stay.
   */
  forget(subject: string): Promise<void>;
  /**
   * Now (epoch ms) on the clock of a store that keeps windows and bans on one of its own (Redis's,
   * shared by every instance); the limiter reads time from it rather than from its own clock. A
   * value, not a method, so that decorators timing the port's methods leave it alone.
   */
  readonly sharedTime?: number | undefined;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Tells every instance at once that a key changed (revoked, ban lifted), so caches drop it without
 * waiting for their entries to expire. Best effort: the key cache lifetime remains the guarantee.
 */
export interface KeyChangeNotifier {
  publish(keyId: string): Promise<void>;
  /** Calls `listener` with the id of every key changed from now on, by any instance. */
  subscribe(listener: (keyId: string) => void): Promise<void>;
  close(): Promise<void>;
}

/** A backend whose answer decides readiness (/readyz). */
export interface Dependency {
  readonly name: 'database' | 'redis';
  /** What answers: sqlite, postgres, redis. */
  readonly backend: string;
  ping(): Promise<void>;
}

import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewApiKeyRecord } from '../../src/domain/api-keys/api-key.js';
import type { AuditRecord } from '../../src/domain/api-keys/key-audit.js';
import { INT64_MAX, type NewPet, type Pet, type PetStatus } from '../../src/domain/pets/pet.js';
import { IDEMPOTENCY_RETENTION_MS } from '../../src/domain/pets/pet-service.js';
import type { IdempotencyScope, IdempotentOutcome, Storage } from '../../src/domain/ports.js';

const PAGE = 500;

/** A name no other test (or earlier run against a shared database) uses. */
function uniqueName(label: string): string {
  return `${label} ${randomUUID()}`;
}

function newScope(): IdempotencyScope {
  return { apiKeyId: `key_${randomUUID()}`, key: randomUUID() };
}

function newKeyRecord(overrides: Partial<NewApiKeyRecord> = {}): NewApiKeyRecord {
  const hash = randomBytes(32).toString('hex');
  return {
    id: `key_${randomUUID()}`,
    label: uniqueName('contract key'),
    plan: 'pro',
    scopes: ['pets:read', 'pets:write'],
    hash,
    displayPrefix: `pk_${hash.slice(0, 9)}`,
    createdAt: Date.now(),
    ...overrides,
  };
}

function auditOf(keyId: string, overrides: Partial<AuditRecord> = {}): AuditRecord {
  return {
    id: `aud_${randomUUID()}`,
    at: Date.now(),
    keyId,
    action: 'set_plan',
    changes: { plan: { from: 'free', to: 'pro' } },
    actor: { kind: 'cli', user: 'ops', host: 'contract' },
    ...overrides,
  };
}

/** Every pet with id > afterId, walking the pages until the end of the table. */
async function listAllAfter(storage: Storage, afterId: number, status?: PetStatus): Promise<Pet[]> {
  const all: Pet[] = [];
  let cursor = afterId;
  for (;;) {
    const page = await storage.pets.list(
      status === undefined
        ? { afterId: cursor, limit: PAGE }
        : { afterId: cursor, status, limit: PAGE },
    );
    all.push(...page);
    const last = page.at(-1);
    if (page.length < PAGE || last === undefined) return all;
    cursor = last.id;
  }
}

/**
 * The behaviour every Storage backend must show. Each test opens its own Storage and only creates
 * uniquely named or keyed data, so the suite also passes against a shared database holding rows.
 */
export function describeStorageContract(name: string, open: () => Promise<Storage>): void {
  describe(`Storage contract: ${name}`, () => {
    let storage: Storage;

    // One Storage for the contract's tests, as a server holds one: each test creates its own data.
    // Opened per test, it started a commit worker thread (an SQLite file) or a pool and a migration
    // check (PostgreSQL) for every test, and ran the migrations again on each new :memory: one.
    beforeAll(async () => {
      storage = await open();
    });

    afterAll(async () => {
      await storage.close();
    });

    describe('PetStore create and get', () => {
      it('returns the pet with categoryId 9223372036854775807 exactly', async () => {
        const input: NewPet = { name: uniqueName('Max'), categoryId: INT64_MAX, status: 'pending' };
        const created = await storage.pets.create(input);
        expect(created).toEqual({ ...input, id: created.id });
        const fetched = await storage.pets.get(BigInt(created.id));
        expect(fetched).toEqual({ id: created.id, ...input });
        expect(fetched?.categoryId).toBe(INT64_MAX);
        expect(typeof fetched?.categoryId).toBe('bigint');
      });

      it('keeps a name with astral emoji, combining marks and accents byte for byte', async () => {
        const name = `Zoë 🐈‍⬛ Ångström 🦄 𝔘nicode e\u0301 ${randomUUID()}`;
        const created = await storage.pets.create({ name, categoryId: 1n });
        expect(created.name).toBe(name);
        const fetched = await storage.pets.get(BigInt(created.id));
        expect(fetched?.name).toBe(name);
        expect(fetched?.categoryId).toBe(1n);
      });

      it('returns every status as given', async () => {
        for (const status of ['available', 'pending', 'sold'] as const) {
          const created = await storage.pets.create({
            name: uniqueName(status),
            categoryId: 7n,
            status,
          });
          const fetched = await storage.pets.get(BigInt(created.id));
          expect(fetched?.status).toBe(status);
        }
      });

      it('has no status property at all when none was given (create, get and list)', async () => {
        const created = await storage.pets.create({
          name: uniqueName('No status'),
          categoryId: 3n,
        });
        expect('status' in created).toBe(false);
        const fetched = await storage.pets.get(BigInt(created.id));
        expect(fetched).toBeDefined();
        expect(fetched === undefined ? true : 'status' in fetched).toBe(false);
        const listed = await storage.pets.list({ afterId: created.id - 1, limit: 1 });
        expect(listed).toHaveLength(1);
        const [first] = listed;
        expect(first?.id).toBe(created.id);
        expect(first === undefined ? true : 'status' in first).toBe(false);
      });

      it('assigns ids that are JavaScript numbers and strictly increasing', async () => {
        const ids: number[] = [];
        for (let i = 0; i < 5; i++) {
          const pet = await storage.pets.create({ name: uniqueName(`Seq ${i}`), categoryId: 2n });
          expect(typeof pet.id).toBe('number');
          expect(Number.isSafeInteger(pet.id)).toBe(true);
          expect(pet.id).toBeGreaterThan(0);
          ids.push(pet.id);
        }
        for (let i = 1; i < ids.length; i++) expect(ids[i]).toBeGreaterThan(ids[i - 1] ?? Infinity);
        const fetched = await storage.pets.get(BigInt(ids[0] ?? 0));
        expect(typeof fetched?.id).toBe('number');
      });

      it('creates concurrent pets in one group, and a row that breaks a rule fails alone', async () => {
        const tag = uniqueName('Group');
        const inputs: NewPet[] = Array.from({ length: 11 }, (_, i) => ({
          name: `${tag} ${i}`,
          // categoryId 0 breaks the table's CHECK (the API refuses it sooner; storage must too).
          categoryId: i === 5 ? 0n : 1n,
        }));
        const results = await Promise.allSettled(inputs.map((input) => storage.pets.create(input)));
        expect(results.map((r) => r.status)).toEqual(
          inputs.map((_, i) => (i === 5 ? 'rejected' : 'fulfilled')),
        );
        const created = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
        const first = Math.min(...created.map((p) => p.id));
        const stored = (await listAllAfter(storage, first - 1)).filter((p) =>
          p.name.startsWith(tag),
        );
        expect(stored).toEqual([...created].sort((a, b) => a.id - b.id));
      });

      it('returns undefined for an id that does not exist, including 9223372036854775807', async () => {
        await expect(storage.pets.get(INT64_MAX)).resolves.toBeUndefined();
        await expect(storage.pets.get(BigInt(Number.MAX_SAFE_INTEGER))).resolves.toBeUndefined();
        await expect(storage.pets.get(0n)).resolves.toBeUndefined();
        await expect(storage.pets.get(-1n)).resolves.toBeUndefined();
      });
    });

    describe('PetStore list', () => {
      it('lists pets after afterId in ascending id order, filtered by status, at most limit', async () => {
        const a = await storage.pets.create({
          name: uniqueName('A'),
          categoryId: 1n,
          status: 'available',
        });
        const b = await storage.pets.create({
          name: uniqueName('B'),
          categoryId: 1n,
          status: 'sold',
        });
        const c = await storage.pets.create({
          name: uniqueName('C'),
          categoryId: 1n,
          status: 'available',
        });
        const d = await storage.pets.create({ name: uniqueName('D'), categoryId: 1n });
        const e = await storage.pets.create({
          name: uniqueName('E'),
          categoryId: 1n,
          status: 'available',
        });
        const mine = new Set([a.id, b.id, c.id, d.id, e.id]);

        const everything = await storage.pets.list({ afterId: a.id - 1, limit: 100 });
        expect(everything.filter((p) => mine.has(p.id))).toEqual([a, b, c, d, e]);
        expect(everything[0]).toEqual(a);

        const available = await storage.pets.list({
          afterId: a.id - 1,
          status: 'available',
          limit: 100,
        });
        expect(available.filter((p) => mine.has(p.id)).map((p) => p.id)).toEqual([
          a.id,
          c.id,
          e.id,
        ]);
        expect(available.every((p) => p.status === 'available')).toBe(true);

        const sold = await storage.pets.list({ afterId: a.id - 1, status: 'sold', limit: 100 });
        expect(sold.filter((p) => mine.has(p.id))).toEqual([b]);

        const limited = await storage.pets.list({
          afterId: a.id - 1,
          status: 'available',
          limit: 2,
        });
        expect(limited).toHaveLength(2);
        expect(limited[0]).toEqual(a);
        expect(limited[1]?.status).toBe('available');
        expect(limited[1]?.id).toBeGreaterThan(a.id);
        expect(limited[1]?.id).toBeLessThanOrEqual(c.id);

        const afterC = await storage.pets.list({ afterId: c.id, status: 'available', limit: 100 });
        expect(afterC.filter((p) => mine.has(p.id)).map((p) => p.id)).toEqual([e.id]);
        expect(afterC.every((p) => p.id > c.id)).toBe(true);

        const one = await storage.pets.list({ afterId: b.id, limit: 1 });
        expect(one).toHaveLength(1);
        expect(one[0]?.id).toBeGreaterThan(b.id);
        expect(one[0]?.id).toBeLessThanOrEqual(c.id);
      });

      it('returns ids in strictly ascending order across the whole page', async () => {
        const first = await storage.pets.create({ name: uniqueName('Order'), categoryId: 4n });
        for (let i = 0; i < 4; i++) {
          await storage.pets.create({ name: uniqueName('Order'), categoryId: 4n });
        }
        const page = await storage.pets.list({ afterId: first.id - 1, limit: 100 });
        expect(page.length).toBeGreaterThanOrEqual(5);
        for (let i = 1; i < page.length; i++) {
          expect(page[i]?.id).toBeGreaterThan(page[i - 1]?.id ?? Infinity);
        }
      });

      it('returns an empty page after the newest pet', async () => {
        const newest = await storage.pets.create({ name: uniqueName('Newest'), categoryId: 1n });
        const page = await storage.pets.list({ afterId: Number.MAX_SAFE_INTEGER, limit: 100 });
        expect(page).toEqual([]);
        const afterNewest = await storage.pets.list({ afterId: newest.id, limit: 100 });
        expect(afterNewest.every((p) => p.id > newest.id)).toBe(true);
      });
    });

    describe('PetStore insertMany', () => {
      it('inserts 2,000 pets, returns 2000, and they are all listable', async () => {
        const marker = await storage.pets.create({
          name: uniqueName('Before seed'),
          categoryId: 1n,
        });
        const tag = randomUUID();
        const statuses = ['available', 'pending', 'sold', undefined] as const;
        const inputs: NewPet[] = Array.from({ length: 2000 }, (_, i) => {
          const status = statuses[i % statuses.length];
          const pet: NewPet = { name: `Seed ${i} ${tag}`, categoryId: BigInt(i + 1) };
          if (status !== undefined) pet.status = status;
          return pet;
        });
        await expect(storage.pets.insertMany(inputs)).resolves.toBe(2000);

        const seeded = (await listAllAfter(storage, marker.id)).filter((p) => p.name.endsWith(tag));
        expect(seeded).toHaveLength(2000);
        for (let i = 1; i < seeded.length; i++) {
          expect(seeded[i]?.id).toBeGreaterThan(seeded[i - 1]?.id ?? Infinity);
        }
        const byName = new Map(seeded.map((p) => [p.name, p]));
        for (const [i, input] of inputs.entries()) {
          const pet = byName.get(input.name);
          expect(pet, `seed ${i}`).toBeDefined();
          expect(pet?.categoryId).toBe(input.categoryId);
          if (input.status === undefined)
            expect(pet === undefined ? true : 'status' in pet).toBe(false);
          else expect(pet?.status).toBe(input.status);
        }

        const sold = (await listAllAfter(storage, marker.id, 'sold')).filter((p) =>
          p.name.endsWith(tag),
        );
        expect(sold).toHaveLength(500);
      });

      it('returns 0 for an empty batch', async () => {
        await expect(storage.pets.insertMany([])).resolves.toBe(0);
      });
    });

    describe('PetStore createIdempotent and IdempotencyStore', () => {
      const request = (scope: IdempotencyScope, fingerprint: string, now = Date.now()) => ({
        scope,
        fingerprint,
        now,
        retentionMs: IDEMPOTENCY_RETENTION_MS,
      });
      const created = (outcome: IdempotentOutcome): Pet => {
        if (outcome.kind !== 'created') throw new Error(`expected created, got ${outcome.kind}`);
        return outcome.pet;
      };

      it('creates the pet for a fresh key, then replays it for the same fingerprint', async () => {
        const scope = newScope();
        const input = { name: uniqueName('Idem'), categoryId: 9n };
        const pet = created(await storage.pets.createIdempotent(input, request(scope, 'fp-1')));
        await expect(storage.pets.get(BigInt(pet.id))).resolves.toEqual(pet);
        await expect(storage.pets.createIdempotent(input, request(scope, 'fp-1'))).resolves.toEqual(
          { kind: 'replay', petId: pet.id },
        );
        const after = await listAllAfter(storage, pet.id - 1);
        expect(after.filter((p) => p.name === input.name)).toEqual([pet]);
      });

      it('reports a mismatch for another fingerprint, and inserts nothing', async () => {
        const scope = newScope();
        const first = created(
          await storage.pets.createIdempotent(
            { name: uniqueName('First'), categoryId: 1n },
            request(scope, 'fp-1'),
          ),
        );
        const name = uniqueName('Other body');
        await expect(
          storage.pets.createIdempotent({ name, categoryId: 1n }, request(scope, 'fp-2')),
        ).resolves.toEqual({ kind: 'mismatch' });
        const after = await listAllAfter(storage, first.id);
        expect(after.filter((p) => p.name === name)).toEqual([]);
      });

      it('keeps keys of different API keys apart', async () => {
        const key = randomUUID();
        const a = { apiKeyId: `key_${randomUUID()}`, key };
        const b = { apiKeyId: `key_${randomUUID()}`, key };
        const input = { name: uniqueName('Scoped'), categoryId: 1n };
        const first = created(await storage.pets.createIdempotent(input, request(a, 'fp-1')));
        const second = created(await storage.pets.createIdempotent(input, request(b, 'fp-1')));
        expect(second.id).not.toBe(first.id);
      });

      it('lets a key create a new pet once its record is older than the retention', async () => {
        const scope = newScope();
        const now = Date.now();
        const input = { name: uniqueName('Retained'), categoryId: 1n };
        const first = created(
          await storage.pets.createIdempotent(input, request(scope, 'fp-1', now)),
        );
        const justBefore = now + IDEMPOTENCY_RETENTION_MS - 1;
        await expect(
          storage.pets.createIdempotent(input, request(scope, 'fp-2', justBefore)),
        ).resolves.toEqual({ kind: 'mismatch' });
        const later = created(
          await storage.pets.createIdempotent(
            input,
            request(scope, 'fp-2', now + IDEMPOTENCY_RETENTION_MS),
          ),
        );
        expect(later.id).toBeGreaterThan(first.id);
        await expect(
          storage.pets.createIdempotent(
            input,
            request(scope, 'fp-2', now + IDEMPOTENCY_RETENTION_MS + 1),
          ),
        ).resolves.toEqual({ kind: 'replay', petId: later.id });
      });

      it('leaves the key free when the pet cannot be stored, so a retry can use it', async () => {
        const scope = newScope();
        // categoryId 0 breaks the table's CHECK: the insert fails after the key was taken.
        await expect(
          storage.pets.createIdempotent(
            { name: uniqueName('Refused'), categoryId: 0n },
            request(scope, 'fp-1'),
          ),
        ).rejects.toThrow();
        const retry = await storage.pets.createIdempotent(
          { name: uniqueName('Retried'), categoryId: 1n },
          request(scope, 'fp-2'),
        );
        expect(retry.kind).toBe('created');
      });

      it('creates exactly one pet among 20 concurrent creates with the same key and body', async () => {
        const scope = newScope();
        const input = { name: uniqueName('Concurrent'), categoryId: 1n };
        const outcomes = await Promise.all(
          Array.from({ length: 20 }, () =>
            storage.pets.createIdempotent(input, request(scope, 'fp-1')),
          ),
        );
        const winners = outcomes.filter((o) => o.kind === 'created');
        expect(winners).toHaveLength(1);
        const petId = created(winners[0] as IdempotentOutcome).id;
        // The others waited for it and were answered with it (or, past the wait, in_progress).
        for (const outcome of outcomes.filter((o) => o.kind !== 'created')) {
          expect([{ kind: 'replay', petId }, { kind: 'in_progress' }]).toContainEqual(outcome);
        }
        const all = await listAllAfter(storage, petId - 1);
        expect(all.filter((p) => p.name === input.name)).toHaveLength(1);
      });

      it('inserts nothing from a batch that fails partway', async () => {
        const marker = await storage.pets.create({
          name: uniqueName('Before batch'),
          categoryId: 1n,
        });
        const tag = uniqueName('Batch');
        const batch = Array.from({ length: 1_000 }, (_, i) => ({
          name: `${tag} ${i}`,
          categoryId: i === 700 ? 0n : 1n,
        }));
        await expect(storage.pets.insertMany(batch)).rejects.toThrow();
        const after = await listAllAfter(storage, marker.id);
        expect(after.filter((p) => p.name.startsWith(tag))).toEqual([]);
      });

      it('purges expired records in batches of at most limit, oldest first', async () => {
        // A time range of this test's own, far below the Date.now() of every other test's records;
        // anything older (a crashed earlier run on a shared database) is cleared first.
        const base = 1_000_000 + Math.floor(Math.random() * 1_000_000) * 100;
        while ((await storage.idempotency.purgeExpired(base, 1_000)) > 0);
        const long = (now: number) => ({ now, retentionMs: IDEMPOTENCY_RETENTION_MS });
        const scopes = [newScope(), newScope(), newScope(), newScope()];
        const pets: Pet[] = [];
        for (const [i, scope] of scopes.entries()) {
          const input = { name: uniqueName(`Purged ${i}`), categoryId: 1n };
          pets.push(
            created(
              await storage.pets.createIdempotent(input, {
                scope,
                fingerprint: 'fp-1',
                ...long(base + 1 + i),
              }),
            ),
          );
        }

        await expect(storage.idempotency.purgeExpired(base + 3, 1)).resolves.toBe(1);
        await expect(storage.idempotency.purgeExpired(base + 3, 5)).resolves.toBe(2);
        await expect(storage.idempotency.purgeExpired(base + 3, 5)).resolves.toBe(0);

        // Gone: another body creates a new pet, where a kept record would answer mismatch.
        for (const scope of scopes.slice(0, 3)) {
          const outcome = await storage.pets.createIdempotent(
            { name: uniqueName('After purge'), categoryId: 1n },
            { scope, fingerprint: 'fp-9', ...long(base + 5) },
          );
          expect(outcome.kind).toBe('created');
        }
        const kept = scopes[3] as IdempotencyScope;
        await expect(
          storage.pets.createIdempotent(
            { name: uniqueName('Kept'), categoryId: 1n },
            { scope: kept, fingerprint: 'fp-9', ...long(base + 5) },
          ),
        ).resolves.toEqual({ kind: 'mismatch' });
        // The pets themselves stay; only their idempotency records went.
        for (const pet of pets)
          await expect(storage.pets.get(BigInt(pet.id))).resolves.toEqual(pet);
        while ((await storage.idempotency.purgeExpired(base + 5, 1_000)) > 0);
      });

      it('refuses to purge with a limit below 1', async () => {
        await expect(storage.idempotency.purgeExpired(Date.now(), 0)).rejects.toThrow(RangeError);
        await expect(storage.idempotency.purgeExpired(Date.now(), -1)).rejects.toThrow(RangeError);
      });
    });

    describe('ApiKeyStore', () => {
      it('round-trips a record through insert, findByHash and findById without inventing fields', async () => {
        const input = newKeyRecord();
        const inserted = await storage.apiKeys.insert(input);
        expect(inserted).toEqual({ ...input, deprecatedCalls: 0 });
        for (const found of [
          await storage.apiKeys.findByHash(input.hash),
          await storage.apiKeys.findById(input.id),
        ]) {
          expect(found).toEqual({ ...input, deprecatedCalls: 0 });
          if (found === undefined) continue;
          expect(Object.keys(found).sort()).toEqual(
            Object.keys({ ...input, deprecatedCalls: 0 }).sort(),
          );
          expect('revokedAt' in found).toBe(false);
          expect('lastUsedAt' in found).toBe(false);
          expect('bannedUntil' in found).toBe(false);
          expect('customLimits' in found).toBe(false);
          expect(typeof found.createdAt).toBe('number');
        }
      });

      it('returns undefined for an unknown hash or id', async () => {
        await expect(
          storage.apiKeys.findByHash(randomBytes(32).toString('hex')),
        ).resolves.toBeUndefined();
        await expect(storage.apiKeys.findById(`key_${randomUUID()}`)).resolves.toBeUndefined();
      });

      it('round-trips the custom limits of an enterprise key', async () => {
        const input = newKeyRecord({
          plan: 'enterprise',
          customLimits: { perMinute: 12_345, perDay: 9_876_543_210 },
        });
        await storage.apiKeys.insert(input);
        const found = await storage.apiKeys.findById(input.id);
        expect(found).toEqual({ ...input, deprecatedCalls: 0 });
        expect(found?.customLimits).toEqual({ perMinute: 12_345, perDay: 9_876_543_210 });
        await expect(storage.apiKeys.findByHash(input.hash)).resolves.toEqual({
          ...input,
          deprecatedCalls: 0,
        });
      });

      it('round-trips the scopes of a key, and changes them in place', async () => {
        const input = newKeyRecord({ scopes: ['pets:read'] });
        await storage.apiKeys.insert(input);
        expect((await storage.apiKeys.findById(input.id))?.scopes).toEqual(['pets:read']);
        const audit = auditOf(input.id, {
          action: 'set_scopes',
          changes: { scopes: { from: ['pets:read'], to: ['pets:write'] } },
        });
        await expect(
          storage.apiKeys.update(input.id, { scopes: ['pets:write'] }, audit),
        ).resolves.toBe(true);
        expect((await storage.apiKeys.findByHash(input.hash))?.scopes).toEqual(['pets:write']);
        const trail = await storage.keyAudit.list({ keyId: input.id, limit: 10 });
        expect(trail.map((record) => record.action)).toEqual(['set_scopes']);
      });

      it('lists keys oldest first, including the ones just inserted', async () => {
        const base = Date.now();
        const newer = newKeyRecord({ createdAt: base + 1000 });
        const older = newKeyRecord({ createdAt: base });
        await storage.apiKeys.insert(newer);
        await storage.apiKeys.insert(older);
        const list = await storage.apiKeys.list();
        const olderIndex = list.findIndex((k) => k.id === older.id);
        const newerIndex = list.findIndex((k) => k.id === newer.id);
        expect(olderIndex).toBeGreaterThanOrEqual(0);
        expect(newerIndex).toBeGreaterThan(olderIndex);
        expect(list[olderIndex]).toEqual({ ...older, deprecatedCalls: 0 });
        expect(list[newerIndex]).toEqual({ ...newer, deprecatedCalls: 0 });
        for (let i = 1; i < list.length; i++) {
          expect(list[i]?.createdAt).toBeGreaterThanOrEqual(list[i - 1]?.createdAt ?? Infinity);
        }
      });

      it('lists the hashes of keys inserted after a sequence number, in insertion order, revoked ones included', async () => {
        const first = newKeyRecord();
        await storage.apiKeys.insert(first);
        const firstSeq = (await storage.apiKeys.hashesAfter(0)).find(
          (row) => row.hash === first.hash,
        )?.seq;
        expect(firstSeq).toBeGreaterThan(0);
        // The last key comes from a host whose clock lags by a minute: a page by creation time
        // would miss it, and an order by creation time would put it first.
        const second = newKeyRecord({ createdAt: first.createdAt + 1 });
        const lagging = newKeyRecord({ createdAt: first.createdAt - 60_000 });
        await storage.apiKeys.insert(second);
        await storage.apiKeys.insert(lagging);
        await storage.apiKeys.revoke(second.id, second.createdAt + 1);

        const rows = await storage.apiKeys.hashesAfter(firstSeq ?? Infinity);

        const mine = rows.filter((row) =>
          [first, second, lagging].some((k) => k.hash === row.hash),
        );
        expect(mine.map((row) => row.hash)).toEqual([second.hash, lagging.hash]);
        expect(
          rows.every((row) => Number.isSafeInteger(row.seq) && row.seq > (firstSeq ?? 0)),
        ).toBe(true);
        for (let i = 1; i < rows.length; i++) {
          expect(rows[i]?.seq).toBeGreaterThan(rows[i - 1]?.seq ?? Infinity);
        }
        const last = rows.at(-1)?.seq ?? Infinity;
        await expect(storage.apiKeys.hashesAfter(last)).resolves.toEqual([]);
      });

      it('refuses insertIfNone, inserting nothing, when the store already holds a key', async () => {
        await storage.apiKeys.insert(newKeyRecord());
        const count = await storage.apiKeys.count();
        const record = newKeyRecord();

        await expect(storage.apiKeys.insertIfNone(record)).resolves.toBe(false);

        await expect(storage.apiKeys.findById(record.id)).resolves.toBeUndefined();
        await expect(storage.apiKeys.count()).resolves.toBe(count);
      });

      it('counts one more key per insert', async () => {
        const before = await storage.apiKeys.count();
        expect(Number.isInteger(before)).toBe(true);
        await storage.apiKeys.insert(newKeyRecord());
        await expect(storage.apiKeys.count()).resolves.toBe(before + 1);
        await storage.apiKeys.insert(newKeyRecord());
        await expect(storage.apiKeys.count()).resolves.toBe(before + 2);
      });

      it('revokes a key: returns true and sets revokedAt', async () => {
        const input = newKeyRecord();
        await storage.apiKeys.insert(input);
        const at = input.createdAt + 5000;
        await expect(storage.apiKeys.revoke(input.id, at)).resolves.toBe(true);
        const found = await storage.apiKeys.findById(input.id);
        expect(found?.revokedAt).toBe(at);
        await expect(storage.apiKeys.findByHash(input.hash)).resolves.toEqual({
          ...input,
          deprecatedCalls: 0,
          revokedAt: at,
        });
      });

      it('keeps the first revokedAt when a key is revoked twice', async () => {
        const input = newKeyRecord();
        await storage.apiKeys.insert(input);
        const first = input.createdAt + 5000;
        await storage.apiKeys.revoke(input.id, first);
        await expect(storage.apiKeys.revoke(input.id, first + 60_000)).resolves.toBe(true);
        const found = await storage.apiKeys.findById(input.id);
        expect(found?.revokedAt).toBe(first);
      });

      it('returns false when revoking an unknown id', async () => {
        await expect(storage.apiKeys.revoke(`key_${randomUUID()}`, Date.now())).resolves.toBe(
          false,
        );
      });

      it('sets lastUsedAt on touch, and later touches move it', async () => {
        const input = newKeyRecord();
        await storage.apiKeys.insert(input);
        const at = input.createdAt + 1234;
        await storage.apiKeys.touch(input.id, at);
        await expect(storage.apiKeys.findById(input.id)).resolves.toEqual({
          ...input,
          deprecatedCalls: 0,
          lastUsedAt: at,
        });
        await storage.apiKeys.touch(input.id, at + 1);
        const found = await storage.apiKeys.findById(input.id);
        expect(found?.lastUsedAt).toBe(at + 1);
      });

      it('adds deprecated-call counts to their keys in one batch, and skips unknown ids', async () => {
        const [a, b] = [newKeyRecord(), newKeyRecord()];
        await storage.apiKeys.insert(a);
        await storage.apiKeys.insert(b);
        const unknown = `key_${randomUUID()}`;
        await storage.apiKeys.addDeprecatedCalls([
          { id: a.id, calls: 3 },
          { id: unknown, calls: 5 },
          { id: b.id, calls: 1 },
        ]);
        await storage.apiKeys.addDeprecatedCalls([{ id: a.id, calls: 4 }]);
        await storage.apiKeys.addDeprecatedCalls([]);
        expect((await storage.apiKeys.findById(a.id))?.deprecatedCalls).toBe(7);
        expect((await storage.apiKeys.findById(b.id))?.deprecatedCalls).toBe(1);
        await expect(storage.apiKeys.findById(unknown)).resolves.toBeUndefined();
        const listed = (await storage.apiKeys.list()).find((record) => record.id === a.id);
        expect(listed?.deprecatedCalls).toBe(7);
      });

      it('resolves touch of an unknown id without creating a key', async () => {
        const id = `key_${randomUUID()}`;
        await expect(storage.apiKeys.touch(id, Date.now())).resolves.toBeUndefined();
        await expect(storage.apiKeys.findById(id)).resolves.toBeUndefined();
      });

      it('records a ban, then lifts it with the time it was lifted', async () => {
        const input = newKeyRecord();
        await storage.apiKeys.insert(input);
        const until = input.createdAt + 900_000;
        await expect(storage.apiKeys.setBannedUntil(input.id, until)).resolves.toBe(true);
        const banned = await storage.apiKeys.findById(input.id);
        expect(banned?.bannedUntil).toBe(until);
        expect(banned !== undefined && 'banLiftedAt' in banned).toBe(false);
        const liftedAt = await storage.apiKeys.liftBan(input.id, Date.now());
        expect(liftedAt).toBeTypeOf('number');
        const lifted = await storage.apiKeys.findById(input.id);
        // The lift names the ban it ended, by its end as recorded, and a second unban keeps it.
        expect(lifted).toEqual({
          ...input,
          deprecatedCalls: 0,
          banLiftedAt: liftedAt,
          liftedBanUntil: until,
        });
        expect(lifted !== undefined && 'bannedUntil' in lifted).toBe(false);
        await storage.apiKeys.liftBan(input.id, Date.now());
        expect((await storage.apiKeys.findById(input.id))?.liftedBanUntil).toBe(until);
      });

      it("lifts a ban at the database's clock where servers share it, not a caller's 10 minutes behind", async () => {
        const input = newKeyRecord();
        await storage.apiKeys.insert(input);
        const callerNow = Date.now() - 600_000;
        const start = Date.now();
        // A record dated by the caller: the store dates it with the lift instead.
        const audit = auditOf(input.id, { action: 'unban', at: callerNow - 1 });
        const liftedAt = await storage.apiKeys.liftBan(input.id, callerNow, audit);
        const end = Date.now();
        if (storage.backend === 'postgres') {
          // The test server runs on this machine: its clock is the one Date.now() reads.
          expect(liftedAt).toBeGreaterThanOrEqual(start - 1_000);
          expect(liftedAt).toBeLessThanOrEqual(end + 1_000);
        } else {
          // SQLite: every process using the file shares the caller's host, and so its clock.
          expect(liftedAt).toBe(callerNow);
        }
        expect((await storage.apiKeys.findById(input.id))?.banLiftedAt).toBe(liftedAt);
        await expect(storage.keyAudit.list({ keyId: input.id, limit: 10 })).resolves.toEqual([
          { ...audit, at: liftedAt },
        ]);
      });

      it('keeps the latest lift time when a key is unbanned twice', async () => {
        const input = newKeyRecord();
        await storage.apiKeys.insert(input);
        const first = await storage.apiKeys.liftBan(input.id, input.createdAt + 1);
        const second = await storage.apiKeys.liftBan(input.id, input.createdAt + 2);
        expect(second).toBeGreaterThanOrEqual(first ?? Number.POSITIVE_INFINITY);
        expect((await storage.apiKeys.findById(input.id))?.banLiftedAt).toBe(second);
      });

      it('returns false from setBannedUntil and undefined from liftBan for an unknown id', async () => {
        const id = `key_${randomUUID()}`;
        await expect(storage.apiKeys.setBannedUntil(id, Date.now() + 1000)).resolves.toBe(false);
        await expect(
          storage.apiKeys.liftBan(id, Date.now(), auditOf(id, { action: 'unban' })),
        ).resolves.toBeUndefined();
        await expect(storage.apiKeys.findById(id)).resolves.toBeUndefined();
        await expect(storage.keyAudit.list({ keyId: id, limit: 10 })).resolves.toEqual([]);
      });
    });

    describe('the key change count read with the store generation', () => {
      it('moves when a key changes in what a key cache holds, not when it is merely used', async () => {
        const input = newKeyRecord();
        await storage.apiKeys.insert(input);
        const keys = async () => (await storage.generation.read()).keys;
        let before = await keys();
        const moves = async (change: () => Promise<unknown>): Promise<boolean> => {
          await change();
          const after = await keys();
          const moved = after !== before;
          before = after;
          return moved;
        };
        // Bookkeeping written as the key is used, and a ban (the rate-limit store enforces it).
        expect(await moves(() => storage.apiKeys.touch(input.id, Date.now()))).toBe(false);
        expect(
          await moves(() => storage.apiKeys.addDeprecatedCalls([{ id: input.id, calls: 2 }])),
        ).toBe(false);
        expect(
          await moves(() => storage.apiKeys.setBannedUntil(input.id, Date.now() + 60_000)),
        ).toBe(false);
        // What a cached key's holder must see.
        expect(
          await moves(() => storage.apiKeys.update(input.id, { plan: 'pro' }, auditOf(input.id))),
        ).toBe(true);
        expect(
          await moves(() =>
            storage.apiKeys.update(
              input.id,
              { expiresAt: Date.now() + 3_600_000 },
              auditOf(input.id, { action: 'set_expiry' }),
            ),
          ),
        ).toBe(true);
        expect(
          await moves(() =>
            storage.apiKeys.update(
              input.id,
              { scopes: ['pets:read'] },
              auditOf(input.id, { action: 'set_scopes' }),
            ),
          ),
        ).toBe(true);
        expect(await moves(() => storage.apiKeys.revoke(input.id, Date.now()))).toBe(true);
      });
    });

    describe('ApiKeyStore key life, KeyAuditStore and KeyUsageStore', () => {
      it('updates plan, limits, expiry and secret with the audit record in one go; finds the key by either hash', async () => {
        const input = newKeyRecord({ plan: 'free' });
        await storage.apiKeys.insert(input, auditOf(input.id, { action: 'create' }));
        const hash = randomBytes(32).toString('hex');
        const audit = auditOf(input.id, { action: 'roll', at: input.createdAt + 5 });
        const update = {
          plan: 'enterprise' as const,
          customLimits: { perMinute: 7, perDay: 70 },
          expiresAt: input.createdAt + 1_000,
          secret: {
            hash,
            displayPrefix: 'pa_live_Abcd',
            previousHash: input.hash,
            previousHashExpiresAt: input.createdAt + 500,
          },
        };
        const seqBefore = Math.max(0, ...(await storage.apiKeys.hashesAfter(0)).map((r) => r.seq));
        await expect(storage.apiKeys.update(input.id, update, audit)).resolves.toBe(true);
        // Renumbered: loads of new hashes by seq meet the new secret's hash.
        expect((await storage.apiKeys.hashesAfter(seqBefore)).map((r) => r.hash)).toContain(hash);
        const expected = {
          ...input,
          plan: 'enterprise',
          customLimits: { perMinute: 7, perDay: 70 },
          expiresAt: input.createdAt + 1_000,
          hash,
          displayPrefix: 'pa_live_Abcd',
          previousHash: input.hash,
          previousHashExpiresAt: input.createdAt + 500,
          deprecatedCalls: 0,
        };
        await expect(storage.apiKeys.findByHash(hash)).resolves.toEqual(expected);
        await expect(storage.apiKeys.findByHash(input.hash)).resolves.toEqual(expected);
        // Back to a plan: the custom limits and the expiry go.
        await storage.apiKeys.update(
          input.id,
          { plan: 'pro', customLimits: null, expiresAt: null },
          auditOf(input.id, { at: input.createdAt + 6 }),
        );
        const back = await storage.apiKeys.findById(input.id);
        expect(back?.plan).toBe('pro');
        expect(back && 'customLimits' in back).toBe(false);
        expect(back && 'expiresAt' in back).toBe(false);
        const trail = await storage.keyAudit.list({ keyId: input.id, limit: 10 });
        expect(trail.map((r) => r.action)).toEqual(['create', 'roll', 'set_plan']);
        expect(trail[1]).toEqual(audit);
      });

      it('applies a change decided from a read only while the key still holds what was read, of two at once exactly one', async () => {
        const input = newKeyRecord({ plan: 'free' });
        await storage.apiKeys.insert(input);
        const read = await storage.apiKeys.findById(input.id);
        if (read === undefined) throw new Error('not stored');
        const rollTo = (n: number) => ({
          secret: {
            hash: randomBytes(32).toString('hex'),
            displayPrefix: `pa_live_Ab${n}d`,
            previousHash: read.hash,
            previousHashExpiresAt: input.createdAt + 500,
          },
        });
        const audits = [1, 2].map((n) =>
          auditOf(input.id, { action: 'roll', at: input.createdAt + n }),
        );
        const results = await Promise.all(
          [1, 2].map((n, i) => storage.apiKeys.update(input.id, rollTo(n), audits[i]!, read)),
        );
        expect(results.filter(Boolean)).toHaveLength(1);
        const trail = await storage.keyAudit.list({ keyId: input.id, limit: 10 });
        expect(trail).toEqual([audits[results.indexOf(true)]]);
        // The read is stale now: a change decided from it applies nowhere, and audits nothing.
        await expect(
          storage.apiKeys.update(input.id, { plan: 'pro' }, auditOf(input.id), read),
        ).resolves.toBe(false);
        const after = await storage.apiKeys.findById(input.id);
        expect(after?.plan).toBe('free');
        // Read again, it applies.
        await expect(
          storage.apiKeys.update(input.id, { plan: 'pro' }, auditOf(input.id), after),
        ).resolves.toBe(true);
        await expect(storage.keyAudit.list({ keyId: input.id, limit: 10 })).resolves.toHaveLength(
          2,
        );
      });

      it('appends nothing for an unknown key, and only the revocation that took effect', async () => {
        const id = `key_${randomUUID()}`;
        await expect(storage.apiKeys.update(id, { plan: 'pro' }, auditOf(id))).resolves.toBe(false);
        const input = newKeyRecord();
        await storage.apiKeys.insert(input);
        const first = auditOf(input.id, { action: 'revoke' });
        await storage.apiKeys.revoke(input.id, input.createdAt + 1, first);
        await storage.apiKeys.revoke(input.id, input.createdAt + 2, auditOf(input.id));
        await expect(storage.keyAudit.list({ keyId: id, limit: 10 })).resolves.toEqual([]);
        await expect(storage.keyAudit.list({ keyId: input.id, limit: 10 })).resolves.toEqual([
          first,
        ]);
      });

      it('lists the audit trail from a time on, oldest first, and has no way to change it', async () => {
        const input = newKeyRecord();
        await storage.apiKeys.insert(input);
        for (const at of [3_000, 1_000, 2_000]) {
          const audit = auditOf(input.id, { action: 'ban', at });
          await storage.apiKeys.setBannedUntil(input.id, input.createdAt + at, audit);
        }
        const since = await storage.keyAudit.list({ keyId: input.id, since: 2_000, limit: 10 });
        expect(since.map((r) => r.at)).toEqual([2_000, 3_000]);
        const one = await storage.keyAudit.list({ keyId: input.id, limit: 1 });
        expect(one.map((r) => r.at)).toEqual([1_000]);
        expect(Object.getOwnPropertyNames(Object.getPrototypeOf(storage.keyAudit))).toEqual([
          'constructor',
          'list',
        ]);
      });

      it('records the end of a ban once, however often it is cleared', async () => {
        const input = newKeyRecord();
        await storage.apiKeys.insert(input);
        const until = input.createdAt + 100;
        await storage.apiKeys.setBannedUntil(
          input.id,
          until,
          auditOf(input.id, { action: 'ban', at: input.createdAt }),
        );
        const ended = await storage.apiKeys.endedBans(until, 1_000);
        expect(ended).toContainEqual({ id: input.id, bannedUntil: until });
        expect(await storage.apiKeys.endedBans(until - 1, 1_000)).not.toContainEqual({
          id: input.id,
          bannedUntil: until,
        });
        const end = auditOf(input.id, { id: `aud_end_${input.id}`, action: 'ban_end', at: until });
        await Promise.all([
          storage.apiKeys.clearEndedBan(input.id, until, end),
          storage.apiKeys.clearEndedBan(input.id, until, end),
        ]);
        await storage.apiKeys.clearEndedBan(input.id, until, end);
        expect((await storage.apiKeys.findById(input.id))?.bannedUntil).toBeUndefined();
        const trail = await storage.keyAudit.list({ keyId: input.id, limit: 10 });
        expect(trail.map((r) => r.action)).toEqual(['ban', 'ban_end']);
      });

      it('adds usage counts per key and day, reads a range, and purges days before a day', async () => {
        const keyId = `key_${randomUUID()}`;
        const other = `key_${randomUUID()}`;
        await storage.keyUsage.add([
          { keyId, day: '2026-01-01', admitted: 3, refused: 1 },
          { keyId, day: '2026-01-02', admitted: 5, refused: 0 },
          { keyId: other, day: '2026-01-02', admitted: 9, refused: 9 },
        ]);
        await storage.keyUsage.add([{ keyId, day: '2026-01-02', admitted: 2, refused: 4 }]);
        await expect(storage.keyUsage.days(keyId, '2026-01-01', '2026-01-31')).resolves.toEqual([
          { keyId, day: '2026-01-01', admitted: 3, refused: 1 },
          { keyId, day: '2026-01-02', admitted: 7, refused: 4 },
        ]);
        await expect(storage.keyUsage.days(keyId, '2026-01-02', '2026-01-02')).resolves.toEqual([
          { keyId, day: '2026-01-02', admitted: 7, refused: 4 },
        ]);
        expect(await storage.keyUsage.purgeBefore('2026-01-02')).toBeGreaterThanOrEqual(1);
        await expect(storage.keyUsage.days(keyId, '2026-01-01', '2026-01-31')).resolves.toEqual([
          { keyId, day: '2026-01-02', admitted: 7, refused: 4 },
        ]);
      });
    });

    describe('Storage lifecycle', () => {
      it('resolves ping()', async () => {
        await expect(storage.ping()).resolves.toBeUndefined();
      });

      it('names its backend', () => {
        expect(['sqlite', 'postgres']).toContain(storage.backend);
      });

      it('does not throw when closed twice', async () => {
        const own = await open();
        await own.close();
        await expect(own.close()).resolves.toBeUndefined();
      });
    });
  });
}

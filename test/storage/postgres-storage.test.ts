import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { DependencyUnavailableError } from '../../src/domain/errors.js';
import type { IdempotencyScope, Storage } from '../../src/domain/ports.js';
import { createStorage } from '../../src/storage/create-storage.js';
import { POSTGRES_MIGRATIONS } from '../../src/storage/postgres/postgres-migrations.js';
import {
  createPostgresStorage,
  type PostgresStorage,
} from '../../src/storage/postgres/postgres-storage.js';
import { SQLITE_MIGRATIONS } from '../../src/storage/sqlite/sqlite-migrations.js';
import {
  POSTGRES_URL,
  postgresConfig,
  postgresFor,
  urlWithSchema,
  usePostgresSchemas,
  withPort,
} from '../helpers/postgres.js';
import { closedPort, startSilentServer, startTcpProxy } from '../helpers/tcp-proxy.js';
import { describeMigrationContract, keyRecord } from './migration-contract.js';
import { describeStorageContract } from './storage-contract.js';
import { scaled } from '../helpers/machine.js';

const INT64_MAX = 9223372036854775807n;
const MIGRATION_NAMES = Object.keys(POSTGRES_MIGRATIONS).sort();
/** Slack for timers, the event loop and a loaded test machine, on top of the configured timeouts. */
const MARGIN_MS = 1_000;

function quote(name: string): string {
  return pg.escapeIdentifier(name);
}

/** Resolves with what `promise` rejected with, and how long that took. */
async function rejection(promise: Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const started = performance.now();
  try {
    await promise;
  } catch (error) {
    return { error, ms: performance.now() - started };
  }
  throw new Error('expected a rejection');
}

function causeOf(error: unknown): unknown {
  return error instanceof Error ? error.cause : undefined;
}

function codeOf(error: unknown): unknown {
  return error instanceof Error ? Reflect.get(error, 'code') : undefined;
}

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error('condition not met in time');
    await sleep(20);
  }
}

async function closeAll(storages: readonly Storage[]): Promise<void> {
  await Promise.all(storages.map((storage) => storage.close()));
}

/** A pet created with an Idempotency-Key at `now`, leaving its idempotency record behind. */
async function keyedCreate(storage: Storage, scope: IdempotencyScope, now: number): Promise<void> {
  await storage.pets.createIdempotent(
    { name: `Keyed ${scope.key}`, categoryId: 1n },
    { scope, fingerprint: 'fp', now, retentionMs: 1_000_000 },
  );
}

const available = await postgresFor('PostgreSQL storage');

describe.runIf(available)('PostgreSQL storage', () => {
  const schemas = usePostgresSchemas();

  describeStorageContract('postgres', () => createStorage(schemas.config(), { migrate: true }));
  describeMigrationContract('postgres', async () =>
    createPostgresStorage(postgresConfig(urlWithSchema(await schemas.fresh()))),
  );

  /** Backends of the service's connections now waiting for a lock on `schema`.pets. */
  async function waitingOnPets(schema: string): Promise<number[]> {
    const rows = await schemas.admin<{ pid: number }>(
      `SELECT l.pid FROM pg_locks l JOIN pg_stat_activity a USING (pid)
       WHERE l.relation = to_regclass($1) AND NOT l.granted
         AND a.application_name = 'pet-adoption-service'`,
      [`${quote(schema)}.pets`],
    );
    return rows.map((row) => row.pid);
  }

  /** A storage on a new, empty schema of its own. */
  async function freshStorage(
    overrides: Parameters<typeof postgresConfig>[1] = {},
  ): Promise<{ schema: string; storage: PostgresStorage }> {
    const schema = await schemas.fresh();
    return {
      schema,
      storage: createPostgresStorage(postgresConfig(urlWithSchema(schema), overrides)),
    };
  }

  describe('durability and backups', () => {
    it('reads fsync and synchronous_commit back from the server', async () => {
      const storage = await createStorage(schemas.config(), { migrate: true });
      try {
        const settings = await storage.durability();
        expect(Object.keys(settings)).toEqual(['fsync', 'synchronous_commit']);
        const [server] = await schemas.admin<{ fsync: string }>('SHOW fsync');
        expect(settings.fsync).toBe(server?.fsync);
      } finally {
        await storage.close();
      }
    });

    it('has no backup of its own (pg_dump and point-in-time recovery do that job)', async () => {
      const storage = await createStorage(schemas.config());
      try {
        expect(storage.backup).toBeUndefined();
      } finally {
        await storage.close();
      }
    });
  });

  describe('types and migrations', () => {
    it('has the migrations of SQLite, by the same names in the same order', () => {
      expect(MIGRATION_NAMES).toEqual(Object.keys(SQLITE_MIGRATIONS).sort());
      expect(Object.keys(POSTGRES_MIGRATIONS)).toEqual(MIGRATION_NAMES);
    });

    it('returns int8 as exact bigints through its own parser, leaving the global pg.types alone', async () => {
      const storage = await createStorage(schemas.config(), { migrate: true });
      try {
        const pet = await storage.pets.create({ name: randomUUID(), categoryId: INT64_MAX });
        const fetched = await storage.pets.get(BigInt(pet.id));
        expect(fetched?.categoryId).toBe(INT64_MAX);
        expect(typeof fetched?.categoryId).toBe('bigint');
        const [listed] = await storage.pets.list({ afterId: pet.id - 1, limit: 1 });
        expect(listed?.categoryId).toBe(INT64_MAX);
        expect(typeof pet.id).toBe('number');
        // Any other pg user in the process still gets the driver's default (a string).
        expect(pg.types.getTypeParser(pg.types.builtins.INT8)('9223372036854775807')).toBe(
          '9223372036854775807',
        );
      } finally {
        await storage.close();
      }
    });

    it('stores every integer as int8 and pet ids as an identity that never passes 2^53 - 1', async () => {
      const { schema, storage } = await freshStorage();
      try {
        await storage.migrate();
        const columns = await schemas.admin<{
          table_name: string;
          column_name: string;
          data_type: string;
          is_identity: string;
          identity_generation: string | null;
        }>(
          `SELECT table_name, column_name, data_type, is_identity, identity_generation
           FROM information_schema.columns
           WHERE table_schema = $1
             AND table_name IN ('pets', 'api_keys', 'idempotency_keys', 'key_audit', 'key_usage')
             AND data_type IN ('bigint', 'integer', 'smallint', 'numeric')`,
          [schema],
        );
        expect(columns.every((c) => c.data_type === 'bigint')).toBe(true);
        expect(columns.map((c) => `${c.table_name}.${c.column_name}`).sort()).toEqual([
          'api_keys.ban_lifted_at',
          'api_keys.banned_until',
          'api_keys.created_at',
          'api_keys.deprecated_calls',
          'api_keys.expires_at',
          'api_keys.last_used_at',
          'api_keys.lifted_ban_until',
          'api_keys.per_day',
          'api_keys.per_minute',
          'api_keys.previous_hash_expires_at',
          'api_keys.revoked_at',
          'api_keys.seq',
          'idempotency_keys.created_at',
          'idempotency_keys.locked_at',
          'idempotency_keys.pet_id',
          'key_audit.at',
          'key_audit.seq',
          'key_usage.admitted',
          'key_usage.refused',
          'pets.category_id',
          'pets.created_at',
          'pets.id',
        ]);
        const id = columns.find((c) => c.table_name === 'pets' && c.column_name === 'id');
        expect(id).toMatchObject({ is_identity: 'YES', identity_generation: 'ALWAYS' });

        await schemas.admin(`SELECT setval(pg_get_serial_sequence($1, 'id'), $2)`, [
          `${quote(schema)}.pets`,
          Number.MAX_SAFE_INTEGER - 1,
        ]);
        const last = await storage.pets.create({ name: 'Last', categoryId: 1n });
        expect(last.id).toBe(Number.MAX_SAFE_INTEGER);

        const { error } = await rejection(storage.pets.create({ name: 'Beyond', categoryId: 1n }));
        expect(error).not.toBeInstanceOf(DependencyUnavailableError);
        expect(codeOf(error)).toBe('2200H'); // sequence_generator_limit_exceeded
        await expect(
          storage.pets.list({ afterId: Number.MAX_SAFE_INTEGER - 1, limit: 10 }),
        ).resolves.toEqual([last]);
      } finally {
        await storage.close();
      }
    });

    it('applies each migration once when 5 instances migrate a fresh schema at the same moment', async () => {
      const schema = await schemas.fresh();
      const storages = Array.from({ length: 5 }, () =>
        createPostgresStorage(postgresConfig(urlWithSchema(schema))),
      );
      try {
        const results = await Promise.all(storages.map((storage) => storage.migrate()));

        expect(results.filter((lines) => lines.length > 0)).toEqual([
          MIGRATION_NAMES.map((name) => `applied ${name}`),
        ]);
        expect(results.filter((lines) => lines.length === 0)).toHaveLength(4);
        const applied = await schemas.admin<{ name: string }>(
          `SELECT name FROM ${quote(schema)}.kysely_migration ORDER BY name`,
        );
        expect(applied.map((row) => row.name)).toEqual(MIGRATION_NAMES);
        await expect(storages[0]?.migrate()).resolves.toEqual([]);
      } finally {
        await closeAll(storages);
      }
    });

    it('waits for the migration lock that another instance holds', async () => {
      const { schema, storage } = await freshStorage();
      // The service's advisory lock ("pets", 1): instances of every version must agree on it.
      const release = await schemas.hold('SELECT pg_advisory_xact_lock(1885697139, 1)');
      try {
        let settled = false;
        const migrating = storage.migrate().finally(() => {
          settled = true;
        });
        await sleep(500);
        expect(settled).toBe(false);
        const tables = await schemas.admin(
          'SELECT 1 FROM information_schema.tables WHERE table_schema = $1',
          [schema],
        );
        expect(tables).toEqual([]);

        await release();

        await expect(migrating).resolves.toEqual(MIGRATION_NAMES.map((name) => `applied ${name}`));
      } finally {
        await release().catch(() => undefined);
        await storage.close();
      }
    });
    it('applies nothing and waits for no lock when every migration is applied', async () => {
      const { storage } = await freshStorage();
      try {
        await storage.migrate();
        // An instance migrating meanwhile (a release's first start) holds the lock for seconds;
        // the others, up to date, start without waiting for it.
        const release = await schemas.hold('SELECT pg_advisory_xact_lock(1885697139, 1)');
        try {
          const waited = await Promise.race([
            storage.migrate(),
            sleep(scaled(2_000)).then(() => 'still waiting'),
          ]);
          expect(waited).toEqual([]);
        } finally {
          await release();
        }
      } finally {
        await storage.close();
      }
    });
  });

  describe('pool', () => {
    it('opens at most poolMax connections, queueing the other queries', async () => {
      const storage = await createStorage(schemas.config({ poolMax: 2, connectTimeoutMs: 5_000 }), {
        migrate: true,
      });
      const release = await schemas.hold(
        `LOCK TABLE ${quote(schemas.schema)}.pets IN ACCESS EXCLUSIVE MODE`,
      );
      try {
        const queries = Array.from({ length: 5 }, () =>
          storage.pets.list({ afterId: 0, limit: 1 }),
        );
        await waitFor(async () => (await waitingOnPets(schemas.schema)).length === 2);
        await sleep(300);
        expect(await waitingOnPets(schemas.schema)).toHaveLength(2);
        await release();
        await expect(Promise.all(queries)).resolves.toHaveLength(5);
      } finally {
        await release().catch(() => undefined);
        await storage.close();
      }
    });

    it('closes every connection on close()', async () => {
      const name = `petstore-close-${randomUUID()}`;
      const url = new URL(schemas.url);
      url.searchParams.set('application_name', name);
      const storage = await createStorage(postgresConfig(url.toString()), { migrate: true });
      await Promise.all(Array.from({ length: 3 }, () => storage.ping()));
      const count = async () =>
        (
          await schemas.admin<{ n: number }>(
            'SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1',
            [name],
          )
        )[0]?.n;
      expect(await count()).toBeGreaterThan(0);

      await storage.close();

      await waitFor(async () => (await count()) === 0);
    });
  });

  describe('dependency down', () => {
    it('rejects with DependencyUnavailableError at once when nothing listens on the port', async () => {
      const url = withPort(schemas.url, await closedPort());
      const config = postgresConfig(url, { connectTimeoutMs: 1_000 });
      const storage = await createStorage(config);
      try {
        for (const call of [
          () => storage.ping(),
          () => storage.pets.list({ afterId: 0, limit: 1 }),
          () => storage.apiKeys.count(),
          () => storage.idempotency.purgeExpired(0, 1),
          () => storage.migrate(),
        ]) {
          const { error, ms } = await rejection(call());
          expect(error).toBeInstanceOf(DependencyUnavailableError);
          expect(error).toMatchObject({ dependency: 'database' });
          expect(codeOf(causeOf(error))).toBe('ECONNREFUSED');
          expect(ms).toBeLessThan(config.connectTimeoutMs + MARGIN_MS);
        }
      } finally {
        await storage.close();
      }
      const { error } = await rejection(createStorage(config, { migrate: true }));
      expect(error).toBeInstanceOf(DependencyUnavailableError);
    });

    it('rejects with DependencyUnavailableError within connectTimeout when the server never answers', async () => {
      const silent = await startSilentServer();
      const config = postgresConfig(withPort(schemas.url, silent.port), { connectTimeoutMs: 500 });
      const storage = await createStorage(config);
      try {
        const { error, ms } = await rejection(storage.ping());
        expect(error).toBeInstanceOf(DependencyUnavailableError);
        expect(ms).toBeGreaterThanOrEqual(config.connectTimeoutMs - 50);
        expect(ms).toBeLessThan(config.connectTimeoutMs + MARGIN_MS);
      } finally {
        await storage.close();
        await silent.close();
      }
    });

    it('has the server cancel a statement over statement_timeout, maps it, and keeps working', async () => {
      const storage = await createStorage(schemas.config({ statementTimeoutMs: 300 }), {
        migrate: true,
      });
      const release = await schemas.hold(
        `LOCK TABLE ${quote(schemas.schema)}.pets IN ACCESS EXCLUSIVE MODE`,
      );
      try {
        const { error, ms } = await rejection(storage.pets.list({ afterId: 0, limit: 1 }));
        expect(error).toBeInstanceOf(DependencyUnavailableError);
        expect(codeOf(causeOf(error))).toBe('57014');
        expect(ms).toBeGreaterThanOrEqual(250);
        expect(ms).toBeLessThan(300 + scaled(MARGIN_MS));
        await release();
        await expect(storage.pets.list({ afterId: 0, limit: 1 })).resolves.toBeInstanceOf(Array);
      } finally {
        await release().catch(() => undefined);
        await storage.close();
      }
    });

    it('maps an administrator ending its connection (57P01), then reconnects by itself', async () => {
      const storage = await createStorage(schemas.config({ poolMax: 1 }), { migrate: true });
      const release = await schemas.hold(
        `LOCK TABLE ${quote(schemas.schema)}.pets IN ACCESS EXCLUSIVE MODE`,
      );
      try {
        const blocked = rejection(storage.pets.list({ afterId: 0, limit: 1 }));
        await waitFor(async () => (await waitingOnPets(schemas.schema)).length === 1);
        const [pid] = await waitingOnPets(schemas.schema);
        await schemas.admin('SELECT pg_terminate_backend($1)', [pid]);

        const { error } = await blocked;
        expect(error).toBeInstanceOf(DependencyUnavailableError);
        expect(codeOf(causeOf(error))).toBe('57P01');
        await release();
        await expect(storage.pets.list({ afterId: 0, limit: 1 })).resolves.toBeInstanceOf(Array);
      } finally {
        await release().catch(() => undefined);
        await storage.close();
      }
    });

    it('maps a connection lost inside a transaction, rolling the whole create back', async () => {
      const storage = await createStorage(schemas.config({ poolMax: 1 }), { migrate: true });
      const scope = { apiKeyId: `key_${randomUUID()}`, key: randomUUID() };
      const request = { scope, fingerprint: 'fp', now: Date.now(), retentionMs: 60_000 };
      const name = `Interrupted ${randomUUID()}`;
      const marker = await storage.pets.create({ name: `Before ${name}`, categoryId: 1n });
      const release = await schemas.hold(
        `LOCK TABLE ${quote(schemas.schema)}.pets IN ACCESS EXCLUSIVE MODE`,
      );
      try {
        // The key is taken, then inserting the pet waits for the lock.
        const blocked = rejection(storage.pets.createIdempotent({ name, categoryId: 1n }, request));
        let pid: number | undefined;
        await waitFor(async () => {
          const rows = await schemas.admin<{ pid: number }>(
            `SELECT l.pid FROM pg_locks l JOIN pg_stat_activity a USING (pid)
             WHERE l.relation = to_regclass($1) AND NOT l.granted
               AND a.application_name = 'pet-adoption-service'`,
            [`${quote(schemas.schema)}.pets`],
          );
          pid = rows[0]?.pid;
          return pid !== undefined;
        });
        await schemas.admin('SELECT pg_terminate_backend($1)', [pid]);

        const { error } = await blocked;
        expect(error).toBeInstanceOf(DependencyUnavailableError);
        await release();
        const pets = await storage.pets.list({ afterId: marker.id, limit: 100 });
        expect(pets.filter((pet) => pet.name === name)).toEqual([]);
        // The key went with the rollback: a retry creates the pet at once.
        await expect(
          storage.pets.createIdempotent({ name, categoryId: 1n }, request),
        ).resolves.toMatchObject({ kind: 'created' });
      } finally {
        await release().catch(() => undefined);
        await storage.close();
      }
    });

    it('fails while the server is down and recovers by itself when it returns', async () => {
      const target = new URL(POSTGRES_URL);
      const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port) });
      const storage = await createStorage(postgresConfig(withPort(schemas.url, proxy.port)), {
        migrate: true,
      });
      try {
        const pet = await storage.pets.create({ name: 'Survivor', categoryId: 1n });

        await proxy.cut();
        for (const call of [
          () => storage.pets.get(BigInt(pet.id)),
          () => storage.ping(),
          () => storage.pets.create({ name: 'Lost', categoryId: 1n }),
        ]) {
          const { error } = await rejection(call());
          expect(error).toBeInstanceOf(DependencyUnavailableError);
        }

        await proxy.restore();
        await expect(storage.ping()).resolves.toBeUndefined();
        await expect(storage.pets.get(BigInt(pet.id))).resolves.toEqual(pet);
      } finally {
        await storage.close();
        await proxy.close();
      }
    });

    it('gives up on a server that stops answering mid-query, then reconnects', async () => {
      const target = new URL(POSTGRES_URL);
      const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port) });
      const config = postgresConfig(withPort(schemas.url, proxy.port), {
        statementTimeoutMs: 300,
        poolMax: 1,
      });
      const storage = await createStorage(config, { migrate: true });
      try {
        await storage.ping();

        proxy.freeze();
        const { error, ms } = await rejection(storage.ping());
        expect(error).toBeInstanceOf(DependencyUnavailableError);
        expect(ms).toBeLessThan(config.statementTimeoutMs + 2 * MARGIN_MS);

        proxy.thaw();
        await expect(storage.ping()).resolves.toBeUndefined();
        await expect(storage.pets.list({ afterId: 0, limit: 1 })).resolves.toBeInstanceOf(Array);
      } finally {
        await storage.close();
        await proxy.close();
      }
    });

    it('leaves real bugs (constraint violations) as ordinary errors', async () => {
      const storage = await createStorage(schemas.config(), { migrate: true });
      try {
        const check = await rejection(storage.pets.insertMany([{ name: 'Zero', categoryId: 0n }]));
        expect(check.error).not.toBeInstanceOf(DependencyUnavailableError);
        expect(codeOf(check.error)).toBe('23514');

        const record = keyRecord(`key_${randomUUID()}`, Date.now());
        await storage.apiKeys.insert(record);
        const unique = await rejection(storage.apiKeys.insert({ ...record, id: `${record.id}_2` }));
        expect(unique.error).not.toBeInstanceOf(DependencyUnavailableError);
        expect(codeOf(unique.error)).toBe('23505');
      } finally {
        await storage.close();
      }
    });
  });

  describe('instances racing', () => {
    const held = (schema: string, scope: IdempotencyScope, petId: number) =>
      schemas.hold(
        `INSERT INTO ${quote(schema)}.idempotency_keys
           (api_key_id, key, fingerprint, pet_id, created_at, locked_at)
         VALUES ('${scope.apiKeyId}', '${scope.key}', 'fp', ${petId}, ${Date.now()}, ${Date.now()})`,
      );

    /** A storage, a pet, and another instance's create of it: its key taken, not committed yet. */
    async function heldByAnother() {
      const storage = await createStorage(schemas.config(), { migrate: true });
      const pet = await storage.pets.create({ name: 'First', categoryId: 1n });
      const scope = { apiKeyId: `key_${randomUUID()}`, key: randomUUID() };
      const release = await held(schemas.schema, scope, pet.id);
      return { storage, pet, scope, release };
    }

    it('answers in_progress after about a second while another request holds the key', async () => {
      const { storage, scope, release } = await heldByAnother();
      try {
        const started = performance.now();
        await expect(
          storage.pets.createIdempotent(
            { name: 'Second', categoryId: 1n },
            { scope, fingerprint: 'fp', now: Date.now(), retentionMs: 60_000 },
          ),
        ).resolves.toEqual({ kind: 'in_progress' });
        const waited = performance.now() - started;
        expect(waited).toBeGreaterThan(900);
        expect(waited).toBeLessThan(scaled(3_000));
      } finally {
        await release();
        await storage.close();
      }
    });

    it('waits for a holder that commits meanwhile, then replays its pet', async () => {
      const { storage, pet, scope, release } = await heldByAnother();
      try {
        const waiting = storage.pets.createIdempotent(
          { name: 'First', categoryId: 1n },
          { scope, fingerprint: 'fp', now: Date.now(), retentionMs: 60_000 },
        );
        await new Promise((resolve) => setTimeout(resolve, 200));
        await release();
        await expect(waiting).resolves.toEqual({ kind: 'replay', petId: pet.id });
      } finally {
        await release().catch(() => undefined);
        await storage.close();
      }
    });

    it('gives exactly one true among concurrent insertIfNone calls of 5 instances on an empty schema', async () => {
      const schema = await schemas.fresh();
      const config = postgresConfig(urlWithSchema(schema));
      await closeAll([await createStorage(config, { migrate: true })]);
      const storages = await Promise.all(Array.from({ length: 5 }, () => createStorage(config)));
      try {
        // Connections opened first, so that the inserts really meet.
        await Promise.all(storages.flatMap((s) => [s.ping(), s.ping()]));

        const results = await Promise.all(
          storages.flatMap((storage, i) => [
            storage.apiKeys.insertIfNone(keyRecord(`key_first_${i}_a`, 1_000)),
            storage.apiKeys.insertIfNone(keyRecord(`key_first_${i}_b`, 1_000)),
          ]),
        );

        expect(results.filter((inserted) => inserted)).toHaveLength(1);
        await expect(storages[0]?.apiKeys.count()).resolves.toBe(1);
        // It is numbered like any other key.
        const [only] = (await storages[0]?.apiKeys.hashesAfter(0)) ?? [];
        expect(only?.seq).toBe(1);
      } finally {
        await closeAll(storages);
      }
    });

    it('deletes each expired record once when two instances purge at the same time', async () => {
      const schema = await schemas.fresh();
      const config = postgresConfig(urlWithSchema(schema));
      const [first, second] = [
        await createStorage(config, { migrate: true }),
        await createStorage(config),
      ];
      try {
        for (let start = 0; start < 300; start += 50) {
          await Promise.all(
            Array.from({ length: 50 }, (_, i) =>
              keyedCreate(
                first,
                { apiKeyId: 'key_purge', key: `k${start + i}` },
                1_000 + start + i,
              ),
            ),
          );
        }
        const drain = async (storage: Storage) => {
          let total = 0;
          for (;;) {
            const deleted = await storage.idempotency.purgeExpired(5_000, 7);
            expect(deleted).toBeLessThanOrEqual(7);
            if (deleted === 0) return total;
            total += deleted;
          }
        };

        const [a, b] = await Promise.all([drain(first), drain(second)]);

        expect(a + b).toBe(300);
        const left = await schemas.admin<{ n: number }>(
          `SELECT count(*)::int AS n FROM ${quote(schema)}.idempotency_keys`,
        );
        expect(left[0]?.n).toBe(0);
      } finally {
        await closeAll([first, second]);
      }
    });

    it('purges around records that another transaction holds instead of waiting for them', async () => {
      const schema = await schemas.fresh();
      const storage = await createStorage(
        postgresConfig(urlWithSchema(schema), { statementTimeoutMs: 3_000 }),
        { migrate: true },
      );
      try {
        for (let i = 0; i < 20; i++) {
          await keyedCreate(storage, { apiKeyId: 'key_held', key: `k${i}` }, 1_000 + i);
        }
        const release = await schemas.hold(
          `SELECT 1 FROM ${quote(schema)}.idempotency_keys ORDER BY created_at LIMIT 5 FOR UPDATE`,
        );
        try {
          const started = performance.now();
          await expect(storage.idempotency.purgeExpired(5_000, 100)).resolves.toBe(15);
          expect(performance.now() - started).toBeLessThan(scaled(1_000));
        } finally {
          await release();
        }
        await expect(storage.idempotency.purgeExpired(5_000, 100)).resolves.toBe(5);
      } finally {
        await storage.close();
      }
    });
  });
});

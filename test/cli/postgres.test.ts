import { describe, expect, it } from 'vitest';
import { hashApiKey } from '../../src/domain/api-keys/key-format.js';
import { POSTGRES_MIGRATIONS } from '../../src/storage/postgres/postgres-migrations.js';
import { postgresFor, urlWithSchema, usePostgresSchemas, withPort } from '../helpers/postgres.js';
import { closedPort } from '../helpers/tcp-proxy.js';
import { createKey, KEY_PATTERN, lines, petstore, withStorage } from './cli-harness.js';

const available = await postgresFor('petstore CLI on PostgreSQL');

describe.runIf(available)('petstore CLI on PostgreSQL', () => {
  const schemas = usePostgresSchemas();

  /** DATABASE_URL of a new, empty schema: each test starts from an empty database. */
  async function freshDatabase(): Promise<string> {
    return urlWithSchema(await schemas.fresh());
  }

  describe('petstore migrate', () => {
    it('applies every migration to a new database, names it without its password, then has nothing to do', async () => {
      const url = new URL(await freshDatabase());
      url.password = 'not-shown';

      const result = await petstore(url.toString(), ['migrate']);

      expect(result.code).toBe(0);
      expect(result.stderr).toContain('PostgreSQL database postgres://postgres:***@127.0.0.1');
      expect(result.stderr).not.toContain('not-shown');
      for (const name of Object.keys(POSTGRES_MIGRATIONS)) {
        expect(result.stderr).toContain(`  applied ${name}\n`);
      }
      expect(result.stderr).toMatch(
        new RegExp(`\\n${Object.keys(POSTGRES_MIGRATIONS).length} migration\\(s\\) applied\\.\\n$`),
      );

      const again = await petstore(url.toString(), ['migrate']);
      expect(again.code).toBe(0);
      expect(again.stderr).toContain('is up to date; no migration to apply');
    });

    it('names its database without a password given in the query, on migrate and cache-reset', async () => {
      // Issue 34 item 8: libpq's other way to give one, `?password=`, was printed as it was.
      const url = new URL(await freshDatabase());
      url.searchParams.set('password', 'not-shown-either');

      for (const command of [['migrate'], ['cache-reset']]) {
        const result = await petstore(url.toString(), command);
        expect(result.code).toBe(0);
        expect(result.stderr).toContain('PostgreSQL database postgres://');
        expect(result.stderr + result.stdout).not.toContain('not-shown-either');
      }
    });

    it('migrates a database that other commands already created', async () => {
      const db = await freshDatabase();
      await petstore(db, ['keys', 'list']);

      expect((await petstore(db, ['migrate'])).stderr).toContain('is up to date');
    });
  });

  describe('petstore keys', () => {
    it('creates a key that authenticates, lists it, revokes it and lifts a ban on it', async () => {
      const db = await freshDatabase();

      const created = await petstore(db, ['keys', 'create', '--plan', 'pro', '--name', 'shop']);
      expect(created.code).toBe(0);
      const key = created.stdout.trim();
      expect(key).toMatch(KEY_PATTERN);
      const id = /key_[0-9A-Za-z]+/.exec(created.stderr)?.[0] ?? '';
      await expect(
        withStorage(db, async (storage) => (await storage.apiKeys.findByHash(hashApiKey(key)))?.id),
      ).resolves.toBe(id);

      const listed = await petstore(db, ['keys', 'list']);
      expect(listed.code).toBe(0);
      expect(lines(listed.stdout)).toHaveLength(1);
      expect(listed.stdout).toMatch(new RegExp(`${id} +"shop" +pro 300/min 10000/day `));
      expect(listed.stdout).not.toContain(key);

      const until = Date.now() + 600_000;
      await withStorage(db, (storage) => storage.apiKeys.setBannedUntil(id, until));
      expect((await petstore(db, ['keys', 'list'])).stdout).toContain(
        `banned until ${new Date(until).toISOString()}`,
      );
      const unbanned = await petstore(db, ['keys', 'unban', id]);
      expect(unbanned.code).toBe(0);
      const record = await withStorage(db, (storage) => storage.apiKeys.findById(id));
      expect(record?.bannedUntil).toBeUndefined();
      expect(record?.banLiftedAt).toBeGreaterThan(0);

      const revoked = await petstore(db, ['keys', 'revoke', id]);
      expect(revoked.code).toBe(0);
      expect(revoked.stderr).toContain(`Revoked ${id}`);
      expect((await petstore(db, ['keys', 'list'])).stdout).toMatch(/revoked \d{4}-/);
    });

    it('creates an enterprise key with its own limits', async () => {
      const db = await freshDatabase();
      const { id } = await createKey(db, [
        '--plan',
        'enterprise',
        '--per-minute',
        '5000',
        '--per-day',
        '900000000',
      ]);

      const record = await withStorage(db, (storage) => storage.apiKeys.findById(id));

      expect(record?.customLimits).toEqual({ perMinute: 5000, perDay: 900_000_000 });
    });

    it('says so, exit 1, when revoking or unbanning an unknown key', async () => {
      const db = await freshDatabase();

      for (const command of ['revoke', 'unban']) {
        const result = await petstore(db, ['keys', command, 'key_nope']);
        expect(result.code).toBe(1);
        expect(result.stderr).toContain('key_nope');
      }
    });
  });

  describe('petstore seed', () => {
    it('inserts the pets asked for, in batches, with increasing ids', async () => {
      const db = await freshDatabase();

      const result = await petstore(db, ['seed', '--count', '2500']);

      expect(result.code).toBe(0);
      expect(result.stderr).toMatch(/^Inserted 2500 pets in /);
      const pets = await withStorage(db, (storage) =>
        storage.pets.list({ afterId: 0, limit: 10_000 }),
      );
      expect(pets).toHaveLength(2500);
      expect(pets.map((pet) => pet.id)).toEqual(Array.from({ length: 2500 }, (_, i) => i + 1));
    });
  });

  describe('when PostgreSQL is unreachable', () => {
    it('says the database is unavailable and exits 1', async () => {
      const db = withPort(schemas.url, await closedPort());

      const result = await petstore(db, ['keys', 'list']);

      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toBe('petstore keys list: failed: database is unavailable\n');
    });
  });
});

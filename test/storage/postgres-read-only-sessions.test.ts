import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DependencyUnavailableError } from '../../src/domain/errors.js';
import { createStorage } from '../../src/storage/create-storage.js';
import { POSTGRES_URL, postgresConfig, postgresFor, urlWithSchema } from '../helpers/postgres.js';

/*
 * After a failover the pool may hold sessions opened while the database took no writes: their
 * setting stays read-only for their life. Once one answered so, the others opened before it are
 * closed, not used: after the database takes writes again no request fails on one of them.
 */
const SUITE = 'PostgreSQL sessions opened read-only, once the database takes writes again';
const available = await postgresFor(SUITE);

describe.runIf(available)(SUITE, () => {
  const suffix = randomBytes(5).toString('hex');
  const role = `petstore_ros_${suffix}`;
  const schema = `petstore_ros_${suffix}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  const asAdmin = (text: string) => admin.query(text);
  const quotedRole = pg.escapeIdentifier(role);
  const sessions = async () =>
    Number(
      (await asAdmin(`SELECT count(*) AS n FROM pg_stat_activity WHERE usename = '${role}'`))
        .rows[0].n,
    );

  beforeAll(async () => {
    await admin.connect();
    await asAdmin(`CREATE ROLE ${quotedRole} LOGIN`);
    await asAdmin(`CREATE SCHEMA ${pg.escapeIdentifier(schema)} AUTHORIZATION ${quotedRole}`);
  });

  afterAll(async () => {
    await asAdmin(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '${role}'`,
    );
    await asAdmin(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
    await asAdmin(`DROP ROLE IF EXISTS ${quotedRole}`);
    await admin.end();
  });

  it('fails one write on a read-only session, then none once writes are taken again', async () => {
    const url = new URL(urlWithSchema(schema));
    url.username = role;
    const storage = await createStorage(postgresConfig(url.toString(), { poolMax: 4 }), {
      migrate: true,
    });
    try {
      await asAdmin(`ALTER ROLE ${quotedRole} SET default_transaction_read_only = on`);
      await asAdmin(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '${role}'`,
      );
      // Reads side by side open the pool's four sessions again, each read-only.
      for (let attempt = 0; (await sessions()) < 4 && attempt < 20; attempt++) {
        await Promise.allSettled(
          Array.from({ length: 4 }, () => storage.pets.list({ afterId: 0, limit: 1 })),
        );
      }
      expect(await sessions()).toBe(4);
      await expect(storage.pets.create({ name: 'Refused', categoryId: 1n })).rejects.toBeInstanceOf(
        DependencyUnavailableError,
      );

      await asAdmin(`ALTER ROLE ${quotedRole} RESET default_transaction_read_only`);
      const outcomes: string[] = [];
      for (let i = 0; i < 4; i++) {
        outcomes.push(
          await storage.pets.create({ name: `After ${i}`, categoryId: 1n }).then(
            () => 'created',
            (error: unknown) => String(error),
          ),
        );
      }
      expect(outcomes).toEqual(['created', 'created', 'created', 'created']);
    } finally {
      await storage.close();
    }
  });
});

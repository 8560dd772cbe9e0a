import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiKeyRecord } from '../../src/domain/api-keys/api-key.js';
import {
  KEY_SORTS,
  type KeyListQuery,
  type KeySort,
} from '../../src/domain/api-keys/key-listing.js';
import type { Storage } from '../../src/domain/ports.js';
import { PLANS } from '../../src/domain/rate-limits/plans.js';
import { createStorage } from '../../src/storage/create-storage.js';
import { keyPageQuery } from '../../src/storage/sql/sql-api-key-store.js';
import { openSqlite, type SqliteConnection } from '../../src/storage/sqlite/sqlite-connection.js';

/**
 * The key listing the console pages through, on SQLite with 100,000 keys: every page is read
 * through an index in the order asked (no sort of every key, checked on the query plan rather than
 * with a clock), and walking the pages of a filtered listing yields exactly the matching keys.
 */
const KEYS = 100_000;
const NOW = Date.UTC(2026, 11, 2);
const DAY = 86_400_000;

function seedRow(i: number) {
  return {
    id: `key_${i.toString(36).padStart(16, '0')}`,
    label: `tenant-${i % 997}-${i}`,
    plan: PLANS[i % PLANS.length] ?? 'free',
    createdAt: NOW - (KEYS - i) * 60_000,
    // Every third key never used; the rest at spread times.
    lastUsedAt: i % 3 === 0 ? null : NOW - ((i * 7919) % 90) * DAY,
    revokedAt: i % 50 === 0 ? NOW - DAY : null,
    expiresAt: i % 40 === 1 ? NOW - DAY : i % 40 === 2 ? NOW + DAY : null,
    bannedUntil: i % 100 === 3 ? NOW + 3_600_000 : null,
  };
}

describe('key listing at 100,000 keys (SQLite)', () => {
  let dir: string;
  let storage: Storage;
  let connection: SqliteConnection;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'petstore-key-listing-'));
    const path = join(dir, 'keys.db');
    storage = await createStorage({ kind: 'sqlite', path }, { migrate: true });
    connection = openSqlite(path);
    const insert = connection.raw.prepare(
      `INSERT INTO api_keys (id, label, plan, per_minute, per_day, hash, display_prefix, created_at,
         last_used_at, revoked_at, banned_until, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, 'pa_live_xxxx', ?, ?, ?, ?, ?)`,
    );
    connection.raw.transaction(() => {
      for (let i = 0; i < KEYS; i += 1) {
        const row = seedRow(i);
        const custom = row.plan === 'enterprise' ? 100 : null;
        insert.run(
          row.id,
          row.label,
          row.plan,
          custom,
          custom === null ? null : 10_000,
          `hash-${i}`,
          row.createdAt,
          row.lastUsedAt,
          row.revokedAt,
          row.bannedUntil,
          row.expiresAt,
        );
      }
    })();
    connection.raw.exec('ANALYZE');
  }, 120_000);

  afterAll(async () => {
    connection.raw.close();
    await storage.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const plan = (query: KeyListQuery): string => {
    const compiled = keyPageQuery(connection.db, query).compile();
    return (
      connection.raw
        .prepare(`EXPLAIN QUERY PLAN ${compiled.sql}`)
        .all(...(compiled.parameters as unknown[])) as Array<{ detail: string }>
    )
      .map((row) => row.detail)
      .join(' | ');
  };

  const INDEX: Record<KeySort, string> = {
    created: 'api_keys_created',
    label: 'api_keys_label',
    lastUsed: 'api_keys_last_used',
  };

  it('reads every sort, either order, first page or later, plan and label filters too, from its index without sorting', () => {
    for (const sort of KEY_SORTS) {
      for (const order of ['asc', 'desc'] as const) {
        for (const extra of [
          {},
          { after: { value: sort === 'label' ? 'tenant-5' : NOW - 30 * DAY, id: 'key_0' } },
          { plan: 'pro' as const },
          { label: 'tenant-42-' },
        ]) {
          const detail = plan({ limit: 51, sort, order, now: NOW, ...extra });
          const where = `${sort} ${order} ${JSON.stringify(extra)}: ${detail}`;
          expect(detail, where).toContain(`INDEX ${INDEX[sort]}`);
          expect(detail, where).not.toContain('TEMP B-TREE');
        }
      }
    }
  });

  it('walks a filtered listing page by page: exactly the matching keys, in order, none twice', async () => {
    const expected = Array.from({ length: KEYS }, (_, i) => seedRow(i))
      .filter(
        (row) =>
          row.plan === 'business' &&
          row.revokedAt === null &&
          (row.expiresAt === null || row.expiresAt > NOW) &&
          (row.bannedUntil === null || row.bannedUntil <= NOW) &&
          row.label.includes('-7'),
      )
      .sort((a, b) => (b.lastUsedAt ?? 0) - (a.lastUsedAt ?? 0) || (b.id < a.id ? -1 : 1))
      .map((row) => row.id);
    expect(expected.length).toBeGreaterThan(1_000);
    const seen: string[] = [];
    let after: KeyListQuery['after'];
    for (;;) {
      const page: ApiKeyRecord[] = await storage.apiKeys.page({
        limit: 500,
        sort: 'lastUsed',
        order: 'desc',
        state: 'active',
        plan: 'business',
        label: '-7',
        now: NOW,
        ...(after === undefined ? {} : { after }),
      });
      seen.push(...page.map((record) => record.id));
      const last = page.at(-1);
      if (page.length < 500 || last === undefined) break;
      after = { value: last.lastUsedAt ?? 0, id: last.id };
    }
    expect(seen).toEqual(expected);
  });

  it('filters each state as a key view judges it', async () => {
    for (const [state, matches] of [
      ['revoked', (r: ReturnType<typeof seedRow>) => r.revokedAt !== null],
      [
        'expired',
        (r: ReturnType<typeof seedRow>) =>
          r.revokedAt === null && r.expiresAt !== null && r.expiresAt <= NOW,
      ],
      [
        'banned',
        (r: ReturnType<typeof seedRow>) =>
          r.revokedAt === null &&
          (r.expiresAt === null || r.expiresAt > NOW) &&
          r.bannedUntil !== null &&
          r.bannedUntil > NOW,
      ],
    ] as const) {
      const want = Array.from({ length: KEYS }, (_, i) => seedRow(i))
        .filter(matches)
        .map((row) => row.id)
        .slice(0, 1_000);
      const got = await storage.apiKeys.page({
        limit: 1_000,
        sort: 'created',
        order: 'asc',
        state,
        now: NOW,
      });
      expect(
        got.map((r) => r.id),
        state,
      ).toEqual(want);
    }
  });
});

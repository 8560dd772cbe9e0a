import type { Migration } from 'kysely';
import { describe, expect, it } from 'vitest';
import { POSTGRES_MIGRATIONS } from '../../src/storage/postgres/postgres-migrations.js';
import { SQLITE_MIGRATIONS } from '../../src/storage/sqlite/sqlite-migrations.js';

/**
 * Expand/contract (docs/operations.md, "Migrations"): a release's migrations only add (tables,
 * nullable columns or columns with a default, indexes), so the release before it still runs against
 * the migrated schema and a roll back needs no down migration. A removal or rename waits for a later
 * release, once no running release reads the old shape; it is then listed in ALLOWED_CONTRACTIONS
 * with the release that stopped reading it.
 *
 * Checked on the text of each migration's `up` (its SQL, or Kysely builder calls) for every
 * migration newer than BASELINE, the last migration of the first release (docs/releases.md), which
 * predates the policy.
 */
const BASELINE = '2026-11-24-07-api-key-deprecated-calls';

/** Contractions a release may make because no release still supported reads what they remove. */
const ALLOWED_CONTRACTIONS: ReadonlySet<string> = new Set<string>([]);

const RULES: ReadonlyArray<{ why: string; refuses: (up: string) => boolean }> = [
  {
    why: 'drops (a table, column, index, constraint, view, trigger)',
    refuses: (up) =>
      /\bDROP\s+(TABLE|COLUMN|INDEX|CONSTRAINT|VIEW|TRIGGER|SCHEMA)\b/i.test(up) ||
      /\.drop(Table|Column|Index|Constraint|View|Schema)\(/.test(up),
  },
  {
    why: 'renames',
    refuses: (up) => /\bRENAME\b/i.test(up) || /\.rename(To|Column)?\(/.test(up),
  },
  {
    why: 'alters a column (type, NOT NULL)',
    refuses: (up) => /\bALTER\s+COLUMN\b/i.test(up) || /\.(alterColumn|modifyColumn)\(/.test(up),
  },
  {
    why: 'deletes rows',
    refuses: (up) => /\b(TRUNCATE|DELETE\s+FROM)\b/i.test(up) || /\.deleteFrom\(/.test(up),
  },
  {
    why: 'adds a NOT NULL column without a default',
    refuses: (up) =>
      [...up.matchAll(/\bADD\s+(?:COLUMN\s+)?[^`;]*?(?=\bADD\b|`|;|$)/gi)].some(
        ([clause]) => /\bNOT\s+NULL\b/i.test(clause) && !/\bDEFAULT\b/i.test(clause),
      ) ||
      (/\.alterTable\(/.test(up) &&
        [...up.matchAll(/\.addColumn\([^;]*/g)].some(
          ([call]) => /\.notNull\(\)/.test(call) && !/\.defaultTo\(/.test(call),
        )),
  },
];

/** What `up` does that the previous release could not live with. */
function violations(up: string): string[] {
  return RULES.filter((rule) => rule.refuses(up)).map((rule) => rule.why);
}

function checked(migrations: Record<string, Migration>): Array<[string, string]> {
  return Object.entries(migrations)
    .filter(([name]) => name.localeCompare(BASELINE) > 0 && !ALLOWED_CONTRACTIONS.has(name))
    .map(([name, migration]) => [name, migration.up.toString()]);
}

describe('the migration policy (expand/contract)', () => {
  it('knows the baseline on both backends, which share their migration names', () => {
    expect(Object.keys(SQLITE_MIGRATIONS)).toContain(BASELINE);
    expect(Object.keys(POSTGRES_MIGRATIONS).sort()).toEqual(Object.keys(SQLITE_MIGRATIONS).sort());
  });

  for (const [backend, migrations] of [
    ['SQLite', SQLITE_MIGRATIONS],
    ['PostgreSQL', POSTGRES_MIGRATIONS],
  ] as const) {
    it(`${backend}: every migration after the baseline only adds`, () => {
      const found = checked(migrations)
        .map(([name, up]) => ({ name, violations: violations(up) }))
        .filter((migration) => migration.violations.length > 0);
      expect(found).toEqual([]);
    });
  }

  it('refuses what the previous release could not run against, and accepts additions', () => {
    const refused = [
      'await sql`ALTER TABLE pets DROP COLUMN status`.execute(db);',
      'await sql`DROP TABLE idempotency_keys`.execute(db);',
      'await db.schema.dropIndex("pets_status_id").execute();',
      'await sql`ALTER TABLE pets RENAME COLUMN name TO title`.execute(db);',
      'await db.schema.alterTable("pets").renameColumn("name", "title").execute();',
      'await sql`ALTER TABLE pets ALTER COLUMN name TYPE varchar(10)`.execute(db);',
      'await sql`ALTER TABLE pets ALTER COLUMN status SET NOT NULL`.execute(db);',
      'await sql`ALTER TABLE pets ADD COLUMN colour TEXT NOT NULL`.execute(db);',
      'await db.schema.alterTable("pets").addColumn("colour", "text", (c) => c.notNull()).execute();',
      'await sql`DELETE FROM api_keys WHERE revoked_at IS NOT NULL`.execute(db);',
    ];
    expect(refused.filter((up) => violations(up).length === 0)).toEqual([]);
    const accepted = [
      'await sql`CREATE TABLE tags (id INTEGER PRIMARY KEY, name TEXT NOT NULL)`.execute(db);',
      'await sql`ALTER TABLE pets ADD COLUMN colour TEXT NULL`.execute(db);',
      'await sql`ALTER TABLE api_keys ADD COLUMN calls bigint NOT NULL DEFAULT 0`.execute(db);',
      'await sql`CREATE INDEX pets_name ON pets (name)`.execute(db);',
      'await db.schema.alterTable("pets").addColumn("colour", "text", (c) => c.notNull().defaultTo("")).execute();',
    ];
    expect(accepted.filter((up) => violations(up).length > 0)).toEqual([]);
  });
});

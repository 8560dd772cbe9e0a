import { copyFileSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAuditLine } from '../../src/cli/audit-lines.js';
import { loadConfig } from '../../src/config/config.js';
import { createServices } from '../../src/services.js';
import { createKey, petstore, useTempDatabases } from './cli-harness.js';

const tempDatabase = useTempDatabases();

/** The key audit lines among some output, parsed. */
function auditLines(text: string) {
  return text.split('\n').flatMap((line) => parseAuditLine(line) ?? []);
}

/** What a server on this database answers for the key: ok, or the reason it refuses it. */
async function judged(db: string, key: string): Promise<string> {
  const services = await createServices(loadConfig({ DATABASE_URL: db }));
  try {
    const result = await services.apiKeys.authenticate(key);
    return result.ok ? 'ok' : result.reason;
  } finally {
    await services.close();
  }
}

describe('key audit lines (CLI)', () => {
  it('writes one JSON line per revoke to stderr, beside the message, with no secret', async () => {
    const db = tempDatabase();
    const { key, id } = await createKey(db);

    const result = await petstore(db, ['keys', 'revoke', id]);

    expect(result.code, result.stderr).toBe(0);
    expect(auditLines(result.stderr)).toEqual([
      expect.objectContaining({ keyId: id, action: 'revoke' }),
    ]);
    const [line, message] = result.stderr.trimEnd().split('\n');
    expect(JSON.parse(line ?? '')).toMatchObject({
      msg: 'key audit',
      audit: { keyId: id, action: 'revoke', actor: { kind: 'cli' } },
    });
    expect(message).toMatch(/^Revoked key_/);
    expect(result.stderr).not.toContain(key.slice(8));
    // Revoking again changes nothing, so nothing more is recorded.
    expect(auditLines((await petstore(db, ['keys', 'revoke', id])).stderr)).toEqual([]);
  });

  it('appends the lines to PETSTORE_AUDIT_LOG_FILE when it is set, and not to stderr', async () => {
    const db = tempDatabase();
    const log = join(dirname(db.slice('sqlite:'.length)), 'audit.log');
    const env = { PETSTORE_AUDIT_LOG_FILE: log };
    const { id } = await createKey(db, ['--plan', 'free'], env);
    const result = await petstore(db, ['keys', 'revoke', id], env);

    expect(result.code, result.stderr).toBe(0);
    expect(auditLines(result.stderr)).toEqual([]);
    expect(auditLines(readFileSync(log, 'utf8')).map((line) => line.action)).toEqual([
      'create',
      'revoke',
    ]);
  });

  it('revokes again, after a restore, the keys the lines say were revoked since the backup', async () => {
    const db = tempDatabase();
    const file = db.slice('sqlite:'.length);
    const folder = dirname(file);
    const log = join(folder, 'audit.log');
    const env = { PETSTORE_AUDIT_LOG_FILE: log };
    const kept = await createKey(db, ['--plan', 'free'], env);
    const revoked = await createKey(db, ['--plan', 'free'], env);
    const backup = join(folder, 'backup.db');
    expect((await petstore(db, ['backup', backup])).code).toBe(0);
    expect((await petstore(db, ['keys', 'revoke', revoked.id], env)).code).toBe(0);
    // A key created and revoked after the backup is gone from it: the replay says so.
    const late = await createKey(db, ['--plan', 'free'], env);
    expect((await petstore(db, ['keys', 'revoke', late.id], env)).code).toBe(0);
    expect(await judged(db, revoked.key)).toBe('revoked');

    // The restore, as docs/operations.md says for SQLite: the service stopped, the file put back.
    copyFileSync(backup, file);
    rmSync(`${file}-wal`, { force: true });
    rmSync(`${file}-shm`, { force: true });
    expect(await judged(db, revoked.key)).toBe('ok');

    const lines = `not json\n{"msg":"listening"}\n${readFileSync(log, 'utf8')}`;
    const replay = await petstore(db, ['keys', 'replay-revocations', '-'], {}, lines);
    expect(replay.code, replay.stderr).toBe(0);
    expect(replay.stderr).toContain(`${revoked.id}: revoked again\n`);
    expect(replay.stderr).toContain(`${late.id}: no such key; skipped\n`);
    expect(replay.stderr).toContain(
      'Replayed 2 revoked keys: 1 revoked again, 0 already revoked, 1 not found.\n',
    );
    expect(await judged(db, revoked.key)).toBe('revoked');
    expect(await judged(db, kept.key)).toBe('ok');

    // Idempotent: a second run, from the file, finds the key already revoked.
    const again = await petstore(db, ['keys', 'replay-revocations', log]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain(`${revoked.id}: already revoked\n`);
    expect(auditLines(again.stderr)).toEqual([]);
  });

  it('refuses a missing log file with one line, exit 1', async () => {
    const db = tempDatabase();
    await createKey(db);
    const result = await petstore(db, ['keys', 'replay-revocations', '/nonexistent/audit.log']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^petstore keys replay-revocations: cannot read \/nonexistent\/audit\.log: /,
    );
  });
});

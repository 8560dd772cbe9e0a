import { describe, expect, it } from 'vitest';
import { ApiKeyService } from '../../src/domain/api-keys/api-key-service.js';
import { hashApiKey } from '../../src/domain/api-keys/key-format.js';
import { systemClock } from '../../src/domain/clock.js';
import {
  createKey,
  KEY_PATTERN,
  lines,
  petstore,
  useTempDatabases,
  withStorage,
} from './cli-harness.js';

const tempDatabase = useTempDatabases();
const ISO = '\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z';

describe('petstore keys create', () => {
  it('prints the key alone on the last stdout line', async () => {
    const result = await petstore(tempDatabase(), [
      'keys',
      'create',
      '--plan',
      'pro',
      '--name',
      'shop',
    ]);

    expect(result.code).toBe(0);
    expect(lines(result.stdout)).toHaveLength(1);
    expect(result.stdout).toMatch(/\n$/);
    expect(lines(result.stdout)[0]).toMatch(KEY_PATTERN);
  });

  it('tells the id, plan, limits and that the key is shown once on stderr', async () => {
    const result = await petstore(tempDatabase(), [
      'keys',
      'create',
      '--plan',
      'pro',
      '--name',
      'shop',
    ]);

    expect(result.stderr).toMatch(/Created API key key_[0-9A-Za-z]{16} \("shop"\)/);
    expect(result.stderr).toContain('pro 300/min 10000/day');
    expect(result.stderr).toContain('only time the key is shown');
    expect(result.stderr).not.toContain(result.stdout.trim());
  });

  it.each([
    ['free', '60/min 1000/day'],
    ['pro', '300/min 10000/day'],
    ['business', '1000/min 100000/day'],
  ])('creates a %s key with the plan limits', async (plan, limits) => {
    const db = tempDatabase();
    const { id } = await createKey(db, ['--plan', plan]);

    const listed = await petstore(db, ['keys', 'list']);

    expect(listed.stdout).toMatch(new RegExp(`${id} +"" +${plan} ${limits} `));
  });

  it('creates an enterprise key with its own per-minute and per-day limits', async () => {
    const db = tempDatabase();
    const { id } = await createKey(db, [
      '--plan',
      'enterprise',
      '--per-minute',
      '5000',
      '--per-day',
      '900000',
    ]);

    const record = await withStorage(db, (storage) => storage.apiKeys.findById(id));

    expect(record?.customLimits).toEqual({ perMinute: 5000, perDay: 900000 });
    expect((await petstore(db, ['keys', 'list'])).stdout).toContain(
      'enterprise 5000/min 900000/day',
    );
  });

  it('accepts --opt=value and options in any order', async () => {
    const result = await petstore(tempDatabase(), [
      'keys',
      'create',
      '--per-day=10',
      '--name=late night',
      '--plan=enterprise',
      '--per-minute=1',
    ]);

    expect(result.code).toBe(0);
    expect(result.stderr).toContain('("late night")');
    expect(result.stderr).toContain('enterprise 1/min 10/day');
  });

  it('makes a pa_test_ key when PETSTORE_ENV is staging', async () => {
    const result = await petstore(tempDatabase(), ['keys', 'create', '--plan', 'free'], {
      PETSTORE_ENV: 'staging',
    });

    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toMatch(/^pa_test_[0-9A-Za-z]{36}$/);
  });

  it('stores only the hash, and the key authenticates', async () => {
    const db = tempDatabase();
    const { key, id } = await createKey(db);

    await withStorage(db, async (storage) => {
      const record = await storage.apiKeys.findByHash(hashApiKey(key));
      expect(record?.id).toBe(id);
      expect(JSON.stringify(record)).not.toContain(key);
      const auth = await new ApiKeyService(storage.apiKeys, systemClock, 'production').authenticate(
        key,
      );
      expect(auth.ok).toBe(true);
    });
  });
});

describe('petstore keys list', () => {
  it('prints one line per key: id, label, plan, scopes, display prefix…, state, created, last used, deprecated calls', async () => {
    const db = tempDatabase();
    const first = await createKey(db, ['--plan', 'free', '--name', 'mine']);
    const second = await createKey(db, ['--plan', 'pro']);

    const result = await petstore(db, ['keys', 'list']);

    expect(result.code).toBe(0);
    const [one, two, ...rest] = lines(result.stdout);
    expect(rest).toEqual([]);
    expect(one).toMatch(
      new RegExp(
        `^${first.id} +"mine" +free 60/min 1000/day +pets:read,pets:write +${first.key.slice(0, 12)}… +active +created ${ISO} +never used +deprecated calls 0$`,
      ),
    );
    expect(two).toMatch(new RegExp(`^${second.id} +"" +pro 300/min 10000/day `));
  });

  it('never prints a key or its hash', async () => {
    const db = tempDatabase();
    const { key } = await createKey(db);

    const result = await petstore(db, ['keys', 'list']);

    expect(result.stdout).toContain(key.slice(0, 12));
    expect(result.stdout).not.toContain(key);
    expect(result.stdout + result.stderr).not.toContain(hashApiKey(key));
  });

  it('notes an empty store on stderr and prints nothing on stdout', async () => {
    const result = await petstore(tempDatabase(), ['keys', 'list']);

    expect(result.code).toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('No API keys yet');
  });

  it('shows when a key was last used', async () => {
    const db = tempDatabase();
    const { id } = await createKey(db);
    await withStorage(db, (storage) => storage.apiKeys.touch(id, Date.UTC(2030, 0, 2, 3, 4, 5)));

    const result = await petstore(db, ['keys', 'list']);

    expect(result.stdout).toContain('last used 2030-01-02T03:04:05.000Z');
  });

  it('shows banned until <time> for a banned key', async () => {
    const db = tempDatabase();
    const { id } = await createKey(db);
    const until = Date.now() + 3_600_000;
    await withStorage(db, (storage) => storage.apiKeys.setBannedUntil(id, until));

    const result = await petstore(db, ['keys', 'list']);

    expect(result.stdout).toContain(`banned until ${new Date(until).toISOString()}`);
  });

  it('shows a ban that has ended as active', async () => {
    const db = tempDatabase();
    const { id } = await createKey(db);
    await withStorage(db, (storage) => storage.apiKeys.setBannedUntil(id, Date.now() - 1_000));

    expect((await petstore(db, ['keys', 'list'])).stdout).toMatch(/… +active +created/);
  });
});

describe('petstore keys revoke', () => {
  it('revokes the key, says servers stop accepting it within 5 seconds, and lists it as revoked', async () => {
    const db = tempDatabase();
    const { id } = await createKey(db);

    const result = await petstore(db, ['keys', 'revoke', id]);

    expect(result.code).toBe(0);
    expect(result.stderr).toContain(`Revoked ${id}`);
    expect(result.stderr).toContain('within 5 seconds');
    expect((await petstore(db, ['keys', 'list'])).stdout).toMatch(new RegExp(`revoked ${ISO}`));
  });

  it('makes the key fail authentication', async () => {
    const db = tempDatabase();
    const { key, id } = await createKey(db);

    await petstore(db, ['keys', 'revoke', id]);

    const auth = await withStorage(db, (storage) =>
      Promise.resolve(
        new ApiKeyService(storage.apiKeys, systemClock, 'production').authenticate(key),
      ),
    );
    expect(auth).toEqual({ ok: false, reason: 'revoked' });
  });

  it('keeps the first revocation time when revoked twice', async () => {
    const db = tempDatabase();
    const { id } = await createKey(db);
    await petstore(db, ['keys', 'revoke', id]);
    const before = await withStorage(db, (storage) => storage.apiKeys.findById(id));

    const again = await petstore(db, ['keys', 'revoke', id]);

    expect(again.code).toBe(0);
    const after = await withStorage(db, (storage) => storage.apiKeys.findById(id));
    expect(after?.revokedAt).toBe(before?.revokedAt);
  });
});

describe('petstore keys unban', () => {
  it('lifts a ban, and the key lists as active', async () => {
    const db = tempDatabase();
    const { id } = await createKey(db);
    await withStorage(db, (storage) => storage.apiKeys.setBannedUntil(id, Date.now() + 60_000));

    const result = await petstore(db, ['keys', 'unban', id]);

    expect(result.code).toBe(0);
    expect(result.stderr).toContain(id);
    const record = await withStorage(db, (storage) => storage.apiKeys.findById(id));
    expect(record?.bannedUntil).toBeUndefined();
    expect((await petstore(db, ['keys', 'list'])).stdout).toMatch(/… +active +created/);
  });

  it('succeeds on a key without a ban, says it was not banned, and audits nothing', async () => {
    const db = tempDatabase();
    const { id } = await createKey(db);

    const result = await petstore(db, ['keys', 'unban', id]);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(`${id} is not banned; nothing to lift.`);
    const audit = await petstore(db, ['keys', 'audit', id, '--json']);
    expect(audit.stdout).not.toContain('unban');
  });
});

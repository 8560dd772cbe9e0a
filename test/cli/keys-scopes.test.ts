import { describe, expect, it } from 'vitest';
import { createKey, petstore, useTempDatabases, withStorage } from './cli-harness.js';

const tempDatabase = useTempDatabases();

describe('petstore keys create --scopes and keys set-scopes', () => {
  it('gives a key made without --scopes both scopes, and one made with --scopes only those', async () => {
    const db = tempDatabase();
    const both = await createKey(db, ['--plan', 'free']);
    const readOnly = await createKey(db, ['--plan', 'free', '--scopes', 'pets:read']);

    const stored = await withStorage(db, async (storage) => ({
      both: await storage.apiKeys.findById(both.id),
      readOnly: await storage.apiKeys.findById(readOnly.id),
    }));
    expect(stored.both?.scopes).toEqual(['pets:read', 'pets:write']);
    expect(stored.readOnly?.scopes).toEqual(['pets:read']);

    const listed = await petstore(db, ['keys', 'list']);
    expect(listed.stdout).toMatch(new RegExp(`${both.id} .* pets:read,pets:write `));
    expect(listed.stdout).toMatch(new RegExp(`${readOnly.id} .* pets:read `));
    const json = await petstore(db, ['keys', 'list', '--json']);
    const views = JSON.parse(json.stdout) as Array<{ id: string; scopes: string[] }>;
    expect(views.find((view) => view.id === readOnly.id)?.scopes).toEqual(['pets:read']);
  });

  it('refuses an unknown scope or an empty list as a usage error, before making anything', async () => {
    const db = tempDatabase();
    for (const scopes of ['pets:delete', ',', '']) {
      const result = await petstore(db, ['keys', 'create', '--plan', 'free', '--scopes', scopes]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('--scopes');
    }
    expect((await petstore(db, ['keys', 'list', '--json'])).stdout.trim()).toBe('[]');
  });

  it('changes the scopes of a key in place, and the audit trail says from what to what', async () => {
    const db = tempDatabase();
    const { id } = await createKey(db, ['--plan', 'pro', '--scopes', 'pets:read']);

    const changed = await petstore(db, ['keys', 'set-scopes', id, 'pets:write,pets:read']);
    expect(changed.code).toBe(0);
    expect(changed.stderr).toContain(`${id} now has scopes pets:read,pets:write`);
    expect((await withStorage(db, (storage) => storage.apiKeys.findById(id)))?.scopes).toEqual([
      'pets:read',
      'pets:write',
    ]);

    const audit = await petstore(db, ['keys', 'audit', id, '--json']);
    const entries = JSON.parse(audit.stdout) as Array<{
      action: string;
      changes: Record<string, { from: unknown; to: unknown }>;
    }>;
    expect(entries.map((entry) => entry.action)).toEqual(['create', 'set_scopes']);
    expect(entries[0]?.changes.scopes).toEqual({ from: null, to: ['pets:read'] });
    expect(entries[1]?.changes.scopes).toEqual({
      from: ['pets:read'],
      to: ['pets:read', 'pets:write'],
    });
  });

  it('set-scopes: a usage error without the list or with an unknown scope; 1 for an unknown key', async () => {
    const db = tempDatabase();
    const { id } = await createKey(db);
    expect((await petstore(db, ['keys', 'set-scopes', id])).code).toBe(2);
    expect((await petstore(db, ['keys', 'set-scopes', id, 'admin'])).code).toBe(2);
    const unknown = await petstore(db, ['keys', 'set-scopes', 'key_nope', 'pets:read']);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('key_nope');
  });
});

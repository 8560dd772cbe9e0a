import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  KEY_SEQ_CERTAIN_AFTER_MS,
  KnownKeyHashes,
} from '../../src/domain/api-keys/known-key-hashes.js';
import type { ApiKeyStore } from '../../src/domain/ports.js';
import { createStorage } from '../../src/storage/create-storage.js';

const hash = () => randomBytes(32).toString('hex');

/** Keys as a database shows them: only committed ones, numbered when their insert began. */
class CommitOrderStore implements Pick<ApiKeyStore, 'hashesAfter'> {
  readonly committed: Array<{ hash: string; seq: number }> = [];
  readonly asked: number[] = [];
  async hashesAfter(seq: number) {
    this.asked.push(seq);
    return this.committed.filter((row) => row.seq > seq).sort((a, b) => a.seq - b.seq);
  }
}

describe('KnownKeyHashes', () => {
  it('finds a key whose creation time lags behind keys loaded before it', async () => {
    const storage = await createStorage({ kind: 'sqlite', path: ':memory:' }, { migrate: true });
    try {
      const known = new KnownKeyHashes(storage.apiKeys);
      const record = (h: string, createdAt: number) => ({
        id: `key_${h.slice(0, 16)}`,
        label: '',
        plan: 'free' as const,
        scopes: ['pets:read', 'pets:write'] as const,
        hash: h,
        displayPrefix: 'pa_live_abcd',
        createdAt,
      });
      const first = hash();
      await storage.apiKeys.insert(record(first, Date.now()));
      expect(await known.has(first)).toBe(true);
      // Created on a host whose clock is an hour behind.
      const lagging = hash();
      await storage.apiKeys.insert(record(lagging, Date.now() - 3_600_000));
      expect(await known.has(lagging)).toBe(true);
    } finally {
      await storage.close();
    }
  });

  it('finds a key that committed after a higher-numbered key was loaded', async () => {
    let now = 0;
    const store = new CommitOrderStore();
    const known = new KnownKeyHashes(store, () => now);
    const [early, late] = [hash(), hash()];
    // Key 2 took its number first but commits after key 3 is already visible.
    store.committed.push({ hash: early, seq: 3 });
    expect(await known.has(early)).toBe(true);
    store.committed.push({ hash: late, seq: 2 });
    now += 1_000;
    expect(await known.has(late)).toBe(true);
  });

  it('stops reading a number again once it is certain, so loads stay small', async () => {
    let now = 0;
    const store = new CommitOrderStore();
    const known = new KnownKeyHashes(store, () => now);
    store.committed.push({ hash: hash(), seq: 5 });
    await known.has(hash());
    now += KEY_SEQ_CERTAIN_AFTER_MS + 1;
    await known.has(hash());
    now += 1_000;
    await known.has(hash());
    expect(store.asked).toEqual([0, 0, 5]);
  });
});

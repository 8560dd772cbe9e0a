import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run-cli.js';
import { call, TEST_BACKEND, type TestServer, useServer } from '../helpers/test-server.js';

const dir = mkdtempSync(join(tmpdir(), 'petstore-bans-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
// The CLI opens the server's database: a file on the embedded backend (an in-memory one is the
// server's alone); on PostgreSQL + Redis the server's own schema and counters.
const shared = TEST_BACKEND === 'postgres';

const logLines: string[] = [];
// Three refusals tolerated after the first 429 of a window; bans last two minutes.
const server = useServer({
  env: {
    ...(shared ? {} : { DATABASE_URL: `sqlite:${join(dir, 'bans.db')}` }),
    PETSTORE_BAN_AFTER: '3',
    PETSTORE_BAN_SECONDS: '120',
  },
  logLines,
});

const list = (key: string) => call(server(), 'GET', '/v1/pets', { key });

async function statuses(key: string, count: number): Promise<Array<number | string>> {
  const out: Array<number | string> = [];
  for (let i = 0; i < count; i++) {
    const res = await list(key);
    out.push(res.status === 429 ? (res.body as { code: string }).code : res.status);
  }
  return out;
}

/** A fresh free key that has just used its minute: its next request is its first 429. */
async function exhaustedKey(s: TestServer, iso: string): Promise<{ id: string; key: string }> {
  s.clock.set(Date.parse(iso));
  const created = await s.createKey('free');
  expect((await statuses(created.key, 60)).every((status) => status === 200)).toBe(true);
  return created;
}

async function unban(id: string): Promise<{ code: number; err: string }> {
  let err = '';
  const code = await runCli(['keys', 'unban', id], {
    stdout: { write: () => true },
    stderr: { write: (chunk: string) => ((err += chunk), true) },
    config: server().config,
    clock: server().clock,
  });
  return { code, err };
}

describe('temporary bans for keys that keep going after a 429', () => {
  it('bans on the request that makes the refusals after the first exceed PETSTORE_BAN_AFTER', async () => {
    const s = server();
    const { id, key } = await exhaustedKey(s, '2026-11-23T08:00:00Z');
    s.clock.advance(10_000);
    // The first 429, three tolerated, then the ban.
    expect(await statuses(key, 4)).toEqual(Array<string>(4).fill('rate_limited'));
    const banned = await list(key);
    expect(banned.status).toBe(429);
    expect(banned.body).toEqual({
      code: 'api_key_banned',
      message: expect.stringMatching(/banned for 120 more seconds/),
      status: 429,
    });
    expect(banned.headers.get('retry-after')).toBe('120');
    expect(banned.headers.get('x-ratelimit-limit')).toBe('60');
    // Every header tells the same story as Retry-After: nothing left until the ban ends.
    const bannedUntil = Math.ceil((s.clock.now() + 120_000) / 1000);
    expect(banned.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(banned.headers.get('x-ratelimit-reset')).toBe(String(bannedUntil));
    expect(banned.headers.get('ratelimit')).toMatch(/^"minute";r=0;t=120, "day";r=0;t=\d+$/);

    const logged = logLines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(logged).toContainEqual(
      expect.objectContaining({ keyId: id, msg: expect.stringMatching(/banned/) }),
    );
    // Also outside the database, as the key audit line a restore does not undo.
    expect(logged).toContainEqual(
      expect.objectContaining({
        msg: 'key audit',
        audit: expect.objectContaining({ keyId: id, action: 'ban', actor: { kind: 'system' } }),
      }),
    );
    // The ban is recorded with the key, for `keys list` and for restarts.
    const record = await s.storage.apiKeys.findById(id);
    expect(record?.bannedUntil).toBe(s.clock.now() + 120_000);
  });

  it('keeps refusing through the ban, in later windows too, without extending it, then ends on time', async () => {
    const s = server();
    const { key } = await exhaustedKey(s, '2026-11-23T08:10:00Z');
    s.clock.advance(30_000);
    await statuses(key, 4);
    expect((await list(key)).headers.get('retry-after')).toBe('120'); // ban starts 08:10:30
    s.clock.advance(60_000); // a fresh minute: without the ban it would be allowed
    const during = await list(key);
    expect(during.body).toMatchObject({ code: 'api_key_banned' });
    expect(during.headers.get('retry-after')).toBe('60');
    s.clock.advance(59_000);
    expect((await list(key)).headers.get('retry-after')).toBe('1');
    s.clock.advance(1_000); // 08:12:30: the ban is over
    const after = await list(key);
    expect(after.status).toBe(200);
    // The requests refused during the ban counted nothing.
    expect(after.headers.get('x-ratelimit-remaining')).toBe('59');
  });

  it('gives RateLimit the same seconds as Retry-After when the ban and the request fall between whole seconds', async () => {
    const s = server();
    const { key } = await exhaustedKey(s, '2026-11-23T08:15:00Z');
    s.clock.advance(10_200);
    await statuses(key, 4);
    const starting = await list(key); // the ban starts at 08:15:10.200 and ends at 08:17:10.200
    s.clock.advance(500);
    const during = await list(key); // 119.5 s left
    for (const [res, seconds] of [
      [starting, 120],
      [during, 120],
    ] as const) {
      expect(res.body).toMatchObject({ code: 'api_key_banned' });
      expect(res.headers.get('retry-after')).toBe(String(seconds));
      expect(res.headers.get('ratelimit')).toBe(
        `"minute";r=0;t=${seconds}, "day";r=0;t=${seconds}`,
      );
      expect(res.headers.get('x-ratelimit-reset')).toBe(
        String(Date.parse('2026-11-23T08:17:11Z') / 1000),
      );
    }
  });

  it('is lifted by `petstore keys unban` within the key cache lifetime', async () => {
    const s = server();
    const { id, key } = await exhaustedKey(s, '2026-11-23T08:20:00Z');
    await statuses(key, 4);
    expect((await list(key)).body).toMatchObject({ code: 'api_key_banned' });
    s.clock.advance(60_000);

    const result = await unban(id);
    expect(result.code).toBe(0);
    expect(result.err).toContain(id);
    s.clock.advance(5_000); // revocations and unbans reach every instance within 5 seconds
    expect(await statuses(key, 2)).toEqual([200, 200]);
    expect((await s.storage.apiKeys.findById(id))?.bannedUntil).toBeUndefined();
  });

  it.runIf(shared)(
    'is lifted at once by `petstore keys unban` where the counters are shared (Redis)',
    async () => {
      const s = server();
      const { id, key } = await exhaustedKey(s, '2026-11-23T08:25:00Z');
      await statuses(key, 4);
      expect((await list(key)).body).toMatchObject({ code: 'api_key_banned' });
      expect((await unban(id)).code).toBe(0);
      // No time passes: the server's key cache still holds the key as it was before the unban.
      // Same minute, still full: the key is back to rate_limited, no longer banned.
      expect(await statuses(key, 1)).toEqual(['rate_limited']);
    },
  );

  it('gives an unbanned key its full tolerance again before another ban', async () => {
    const s = server();
    const { id, key } = await exhaustedKey(s, '2026-11-23T08:30:00Z');
    await statuses(key, 4);
    expect((await list(key)).body).toMatchObject({ code: 'api_key_banned' });
    await unban(id);
    s.clock.advance(5_000);
    // Same minute, still full: the first 429 again, three tolerated, then a new ban.
    expect(await statuses(key, 5)).toEqual([
      'rate_limited',
      'rate_limited',
      'rate_limited',
      'rate_limited',
      'api_key_banned',
    ]);
  });

  it('outlives a restart: a ban recorded with the key holds on a server with fresh counters', async () => {
    const s = server();
    const { id, key } = await exhaustedKey(s, '2026-11-23T08:40:00Z');
    await s.storage.apiKeys.setBannedUntil(id, s.clock.now() + 300_000);
    s.clock.advance(60_000); // a fresh minute, and the key cache has expired
    const res = await list(key);
    expect(res.body).toMatchObject({ code: 'api_key_banned' });
    expect(res.headers.get('retry-after')).toBe('240');
  });

  it('never bans an address: requests without a key only ever get rate_limited', async () => {
    const s = server();
    s.clock.set(Date.parse('2026-11-23T08:50:00Z'));
    const codes: string[] = [];
    for (let i = 0; i < 45; i++) {
      const res = await call(s, 'GET', '/v1/pets');
      codes.push(res.status === 401 ? 'unauthorized' : (res.body as { code: string }).code);
    }
    expect(codes.slice(0, 30)).toEqual(Array<string>(30).fill('unauthorized'));
    expect(codes.slice(30)).toEqual(Array<string>(15).fill('rate_limited'));
  });
});

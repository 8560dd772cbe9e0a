import { describe, expect, it } from 'vitest';
import { overlayStorage } from '../helpers/storage-overlay.js';
import { call, useServer } from '../helpers/test-server.js';

const lines: string[] = [];
let databaseDown = false;
const server = useServer({
  logLines: lines,
  wrapStorage: (storage) =>
    overlayStorage(storage, {
      pets: {
        list: (query) =>
          databaseDown ? Promise.reject(new Error('disk on fire')) : storage.pets.list(query),
      },
    }),
});
const parsed = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>);

describe('request logs', () => {
  it('carry the request id on every line of a request and never the API key', async () => {
    const { key } = await server().createKey();
    const res = await call(server(), 'POST', '/v1/pets', {
      key,
      body: { name: 'Logged', categoryId: 1 },
      headers: { 'x-request-id': 'log-test-1' },
    });
    expect(res.status).toBe(201);
    const mine = parsed().filter((l) => l.requestId === 'log-test-1');
    expect(mine.length).toBeGreaterThanOrEqual(2);
    expect(lines.join('\n')).not.toContain(key);
    expect(lines.join('\n')).not.toContain(key.slice(8));
  });

  it('log a 401 without the token that was sent', async () => {
    const bogus = 'pa_live_' + 'A'.repeat(36);
    const res = await call(server(), 'GET', '/v1/pets', {
      key: bogus,
      headers: { 'x-request-id': 'log-test-2' },
    });
    expect(res.status).toBe(401);
    expect(lines.some((l) => l.includes('log-test-2'))).toBe(true);
    expect(lines.join('\n')).not.toContain(bogus);
  });

  it('log only the interface query parameters, never a key sent as ?api_key= or ?access_token=', async () => {
    const { key } = await server().createKey();
    const res = await call(server(), 'GET', `/v1/pets?limit=2&api_key=${key}&access_token=${key}`, {
      headers: { 'x-request-id': 'log-test-3' },
    });
    expect(res.status).toBe(401);
    const urls = parsed()
      .filter((l) => l.requestId === 'log-test-3' && l.req !== undefined)
      .map((l) => (l.req as { url: string }).url);
    expect(urls).toEqual(['/v1/pets?limit=2 (+2 other parameters)']);
    expect(lines.join('\n')).not.toContain(key.slice(8));
  });

  it('mask a key sent in the path, which a 404 message quotes', async () => {
    const { key } = await server().createKey();
    const res = await call(server(), 'GET', `/v1/${key}`, {
      key,
      headers: { 'x-request-id': 'log-test-4' },
    });
    expect(res.status).toBe(404);
    expect(lines.some((l) => l.includes('log-test-4'))).toBe(true);
    expect(lines.join('\n')).not.toContain(key.slice(8));
  });

  it('mask a key percent-encoded in the path, in the URL and in the 404 message that quotes it', async () => {
    const { key } = await server().createKey();
    const encoded = key.replaceAll('_', '%5F').replace('a', '%61');
    for (const path of [`/v1/${encoded}`, `/v1/pets/${encoded}`, `/v1/pets/${encoded}%ZZ`]) {
      const res = await call(server(), 'GET', path, {
        key,
        headers: { 'x-request-id': 'log-test-encoded' },
      });
      expect(res.status).toBeGreaterThanOrEqual(400);
    }
    const mine = lines.filter((l) => l.includes('log-test-encoded'));
    expect(mine.filter((l) => l.includes('pa_live_[redacted]')).length).toBeGreaterThanOrEqual(3);
    expect(lines.join('\n')).not.toContain(key.slice(12));
  });

  it('never take a key sent as X-Request-Id for the request id, which every line carries', async () => {
    const { key } = await server().createKey();
    const res = await call(server(), 'GET', '/v1/pets', {
      key,
      headers: { 'x-request-id': `trace-${key}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(lines.some((l) => l.includes(res.headers.get('x-request-id') ?? '?'))).toBe(true);
    expect(lines.join('\n')).not.toContain(key.slice(8));
  });

  it('log the headers of a failed request with credentials redacted and keys masked', async () => {
    const { key } = await server().createKey('pro');
    databaseDown = true;
    try {
      const res = await call(server(), 'GET', '/v1/pets', {
        key,
        headers: { 'x-request-id': 'log-test-5', 'x-api-key': key, cookie: 'session=s3cr3t' },
      });
      expect(res.status).toBe(500);
    } finally {
      databaseDown = false;
    }
    const failure = parsed().find((l) => l.requestId === 'log-test-5' && l.level === 50);
    const headers = failure?.headers as Record<string, string> | undefined;
    expect(headers?.authorization).toBe('[redacted]');
    expect(headers?.cookie).toBe('[redacted]');
    expect(headers?.['x-api-key']).toBe('pa_live_[redacted]');
    expect(lines.join('\n')).not.toContain(key.slice(8));
    expect(lines.join('\n')).not.toContain('s3cr3t');
  });
});

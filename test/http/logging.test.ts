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

/** Every 2xx/3xx line dropped (LOG_SAMPLE_SUCCESS=0); 4xx and 5xx lines are kept whatever it says. */
const sampledLines: string[] = [];
const sampled = useServer({ logLines: sampledLines, env: { LOG_SAMPLE_SUCCESS: '0' } });

const INFO = 30;
const requestLines = (from: string[], requestId: string) =>
  from
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.requestId === requestId && l.msg === 'request completed');

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

  it('write one line at info per request with method, route template, status, duration and key id, never the URL of a route', async () => {
    const { key, id } = await server().createKey();
    const created = await call(server(), 'POST', '/v1/pets', {
      key,
      body: { name: 'Logged at info', categoryId: 1 },
      headers: { 'x-request-id': 'log-info-1' },
    });
    expect(created.status).toBe(201);
    const petId = (created.body as { id: number }).id;
    const read = await call(server(), 'GET', `/v1/pets/${petId}?api_key=${key}`, {
      key,
      headers: { 'x-request-id': 'log-info-2' },
    });
    expect(read.status).toBe(200);

    const [post] = requestLines(lines, 'log-info-1');
    expect(post).toMatchObject({
      level: INFO,
      method: 'POST',
      route: '/v1/pets',
      status: 201,
      keyId: id,
      durationMs: expect.any(Number),
    });
    expect(requestLines(lines, 'log-info-2')).toEqual([
      expect.objectContaining({ level: INFO, route: '/v1/pets/{petId}', status: 200, keyId: id }),
    ]);
    const line = JSON.stringify(requestLines(lines, 'log-info-2'));
    expect(line).not.toContain(`/v1/pets/${petId}`);
    expect(line).not.toContain(key.slice(8));
    expect(post?.url).toBeUndefined();
  });

  it('write the request line of an unmatched path with the URL as logged elsewhere: keys masked, only the interface parameters', async () => {
    const { key } = await server().createKey();
    const res = await call(server(), 'GET', `/v1/nothing/${key}?limit=3&api_key=${key}`, {
      key,
      headers: { 'x-request-id': 'log-info-3' },
    });
    expect(res.status).toBe(404);
    const [line] = requestLines(lines, 'log-info-3');
    expect(line).toMatchObject({ level: INFO, status: 404, method: 'GET' });
    expect(line?.route).toBeUndefined();
    expect(line?.url).toBe('/v1/nothing/pa_live_[redacted]?limit=3 (+1 other parameters)');
  });

  it('drop successful request lines with LOG_SAMPLE_SUCCESS=0 and keep every 4xx line', async () => {
    const { key } = await sampled().createKey();
    for (let i = 0; i < 5; i += 1) {
      const ok = await call(sampled(), 'GET', '/v1/pets', {
        key,
        headers: { 'x-request-id': `sampled-ok-${i}` },
      });
      expect(ok.status).toBe(200);
      const refused = await call(sampled(), 'GET', '/v1/pets', {
        headers: { 'x-request-id': `sampled-401-${i}` },
      });
      expect(refused.status).toBe(401);
    }
    for (let i = 0; i < 5; i += 1) {
      expect(requestLines(sampledLines, `sampled-ok-${i}`)).toEqual([]);
      expect(requestLines(sampledLines, `sampled-401-${i}`)).toEqual([
        expect.objectContaining({ status: 401, route: '/v1/pets' }),
      ]);
    }
  });
});

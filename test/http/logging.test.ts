import { describe, expect, it } from 'vitest';
import { call, useServer } from '../helpers/test-server.js';

const lines: string[] = [];
const server = useServer({ logLines: lines });

describe('request logs', () => {
  it('carry the request id on every line of a request and never the API key', async () => {
    const { key } = await server().createKey();
    const res = await call(server(), 'POST', '/v1/pets', {
      key,
      body: { name: 'Logged', categoryId: 1 },
      headers: { 'x-request-id': 'log-test-1' },
    });
    expect(res.status).toBe(201);
    const mine = lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.requestId === 'log-test-1');
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
});

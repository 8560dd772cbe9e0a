import { describe, expect, it, vi } from 'vitest';
import { sample, scrapeAt } from '../helpers/prometheus-text.js';
import { call, type TestServer, useServer } from '../helpers/test-server.js';

const server = useServer({ env: { PETSTORE_BAN_AFTER: '2' } });

const scrape = (s: TestServer) => scrapeAt(s.url);

describe('GET /metrics', () => {
  it('counts requests by operation and status, with a latency histogram', async () => {
    const s = server();
    s.clock.set(Date.parse('2026-11-23T02:00:00Z'));
    const { key } = await s.createKey('pro');
    const before = await scrape(s);
    const ok = { operation: 'listPets', method: 'GET', status: '200' };
    for (let i = 0; i < 3; i++) await call(s, 'GET', '/v1/pets', { key });
    await call(s, 'GET', '/v1/pets?limit=0', { key });
    await call(s, 'GET', '/v1/pets');
    const after = await scrape(s);
    expect(sample(after, 'petstore_http_requests_total', ok)).toBe(
      sample(before, 'petstore_http_requests_total', ok) + 3,
    );
    for (const status of ['400', '401']) {
      const labels = { operation: 'listPets', method: 'GET', status };
      expect(sample(after, 'petstore_http_requests_total', labels)).toBeGreaterThanOrEqual(1);
    }
    expect(
      sample(after, 'petstore_http_request_duration_seconds_count', { operation: 'listPets' }),
    ).toBeGreaterThanOrEqual(5);
    expect(after).toMatch(
      /petstore_http_request_duration_seconds_bucket\{le="0\.005",operation="listPets"\} \d+/,
    );
    // Unknown paths are one label, whatever the path, so scanners cannot blow up the series.
    await call(s, 'GET', '/v1/a', { key });
    await call(s, 'GET', '/v1/b', { key });
    const unmatched = { operation: 'unmatched', method: 'GET', status: '404' };
    expect(sample(await scrape(s), 'petstore_http_requests_total', unmatched)).toBe(2);
  });

  it('counts 429s by code and bans', async () => {
    const s = server();
    s.clock.set(Date.parse('2026-11-23T02:10:00Z'));
    const { key } = await s.createKey('enterprise', { perMinute: 1, perDay: 10 });
    const before = await scrape(s);
    // One allowed, the first 429 and two tolerated, then the ban and one more during it.
    for (let i = 0; i < 6; i++) await call(s, 'GET', '/v1/pets', { key });
    const after = await scrape(s);
    const delta = (name: string, labels: Record<string, string> = {}) =>
      sample(after, name, labels) - sample(before, name, labels);
    const plan = 'enterprise';
    expect(delta('petstore_rate_limited_total', { code: 'rate_limited', plan })).toBe(3);
    expect(delta('petstore_rate_limited_total', { code: 'api_key_banned', plan })).toBe(2);
    expect(delta('petstore_api_key_bans_total', { plan })).toBe(1);
  });

  it('counts calls to the deprecated getPet by plan, one series per plan however many keys call it', async () => {
    const s = server();
    s.clock.set(Date.parse('2026-11-23T02:20:00Z'));
    const pro = await Promise.all(Array.from({ length: 20 }, () => s.createKey('pro')));
    const business = await s.createKey('business');
    const first = pro[0] as { key: string };
    const created = await call(s, 'POST', '/v1/pets', {
      key: first.key,
      body: { name: 'Legacy', categoryId: 1 },
    });
    const path = `/v1/pets/${(created.body as { id: number }).id}`;
    const before = await scrape(s);
    for (const { key } of pro) await call(s, 'GET', path, { key });
    await call(s, 'GET', '/v1/pets/999999999', { key: business.key });
    await call(s, 'GET', path); // no key: no plan to count it under
    await call(s, 'GET', '/v1/pets', { key: business.key }); // not deprecated
    const text = await scrape(s);
    const calls = (plan: string, t: string) =>
      sample(t, 'petstore_deprecated_operation_calls_total', { operation: 'getPet', plan });
    expect(calls('pro', text) - calls('pro', before)).toBe(20);
    expect(calls('business', text) - calls('business', before)).toBe(1);
    // A label never takes one value per key: 21 keys, two plans, two series.
    const series = text.match(/^petstore_deprecated_operation_calls_total\{.*$/gm) ?? [];
    expect(series).toHaveLength(2);
    expect(series.join('\n')).not.toMatch(/key_id|key_/);
  });

  it('counts deprecated calls per key with the key, written in one batch per interval', async () => {
    const s = server();
    s.clock.set(Date.parse('2026-11-23T02:30:00Z'));
    const a = await s.createKey('pro');
    const b = await s.createKey('pro');
    const created = await call(s, 'POST', '/v1/pets', {
      key: a.key,
      body: { name: 'Legacy', categoryId: 1 },
    });
    const path = `/v1/pets/${(created.body as { id: number }).id}`;
    const stored = async (id: string) => (await s.storage.apiKeys.findById(id))?.deprecatedCalls;
    // Two calls an interval apart: whatever earlier tests left pending, an interval starts now.
    await call(s, 'GET', path, { key: b.key });
    s.clock.advance(60_000);
    await call(s, 'GET', path, { key: b.key });
    await vi.waitFor(async () => expect(await stored(b.id)).toBe(2));
    for (let i = 0; i < 3; i++) await call(s, 'GET', path, { key: a.key });
    await call(s, 'GET', path, { key: b.key });
    // Within the interval nothing is written: no write per request.
    expect(await stored(a.id)).toBe(0);
    expect(await stored(b.id)).toBe(2);
    s.clock.advance(60_000);
    await call(s, 'GET', path, { key: b.key });
    await vi.waitFor(async () => {
      expect(await stored(a.id)).toBe(3);
      expect(await stored(b.id)).toBe(4);
    });
  });

  it('reports process metrics and needs no key', async () => {
    const text = await scrape(server());
    expect(text).toMatch(/^petstore_process_resident_memory_bytes \d+/m);
    expect(text).toMatch(/^# HELP petstore_http_requests_total /m);
  });
});

import { describe, expect, it } from 'vitest';
import { adminCall, useAdminServer } from './admin-server.js';

const server = useAdminServer();
const KEY_ID = 'key_0000000000000000';
const SYSTEM = { kind: 'system' } as const;

async function token(): Promise<string> {
  return (await server().createToken()).token;
}

describe('admin API bad input: 400 with the field named, before anything changes', () => {
  const cases: Array<[string, string, unknown, string, RegExp]> = [
    ['POST', '/admin/v1/keys', { plan: 'gold' }, 'invalid_body', /plan must be one of/],
    ['POST', '/admin/v1/keys', {}, 'invalid_body', /plan is required/],
    [
      'POST',
      '/admin/v1/keys',
      { plan: 'free', perMinute: 5 },
      'invalid_body',
      /only for plan enterprise/,
    ],
    ['POST', '/admin/v1/keys', { plan: 'enterprise', perMinute: 5 }, 'invalid_body', /needs both/],
    [
      'POST',
      '/admin/v1/keys',
      { plan: 'free', expiresAt: 'tomorrow' },
      'invalid_body',
      /^expiresAt must be an RFC 3339 time with its offset, like 2027-01-31T12:00:00Z$/,
    ],
    [
      'POST',
      '/admin/v1/keys',
      { plan: 'free', secret: 'x' },
      'invalid_body',
      /Unknown field secret/,
    ],
    [
      'PUT',
      `/admin/v1/keys/${KEY_ID}/plan`,
      { plan: 'enterprise', perMinute: 0, perDay: 9 },
      'invalid_body',
      /perMinute/,
    ],
    [
      'PUT',
      `/admin/v1/keys/${KEY_ID}/expiry`,
      { expiresAt: 'soon' },
      'invalid_body',
      /^expiresAt must be an RFC 3339 time with its offset, like 2027-01-31T12:00:00Z, or never$/,
    ],
    ['PUT', `/admin/v1/keys/${KEY_ID}/expiry`, {}, 'invalid_body', /expiresAt is required/],
    ['POST', `/admin/v1/keys/${KEY_ID}/roll`, { graceSeconds: -1 }, 'invalid_body', /graceSeconds/],
    [
      'GET',
      '/admin/v1/keys/not-a-key',
      undefined,
      'invalid_parameter',
      /^keyId must be a key id: key_ and 16 letters and digits$/,
    ],
    ['GET', `/admin/v1/keys/${KEY_ID}/usage?days=0`, undefined, 'invalid_parameter', /days/],
    ['GET', `/admin/v1/keys/${KEY_ID}/usage?days=abc`, undefined, 'invalid_parameter', /days/],
    [
      'GET',
      '/admin/v1/audit?since=yesterday',
      undefined,
      'invalid_parameter',
      /^since must be an RFC 3339 time with its offset/,
    ],
    ['GET', '/admin/v1/audit?keyId=nope', undefined, 'invalid_parameter', /keyId/],
    // Past the year 9999 in UTC, and a day that does not exist: refused, not stored.
    ...[
      '9999-12-31T23:59:59-23:59',
      '2027-02-30T00:00:00Z',
      '2027-02-30',
      '2027-01-31T24:00:00Z',
      '2027-01-31T12:00:00+24:00',
      '1969-12-31T23:59:59Z',
    ].flatMap((expiresAt): Array<[string, string, unknown, string, RegExp]> => [
      ['POST', '/admin/v1/keys', { plan: 'free', expiresAt }, 'invalid_body', /expiresAt/],
      ['PUT', `/admin/v1/keys/${KEY_ID}/expiry`, { expiresAt }, 'invalid_body', /expiresAt/],
      [
        'GET',
        `/admin/v1/audit?since=${encodeURIComponent(expiresAt)}`,
        undefined,
        'invalid_parameter',
        /since/,
      ],
    ]),
  ];
  for (const [method, path, body, code, message] of cases) {
    it(`returns 400 ${code} for ${method} ${path} ${JSON.stringify(body) ?? ''}`, async () => {
      const res = await adminCall(server(), method, path, {
        key: await token(),
        ...(body === undefined ? {} : { body }),
      });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code, status: 400 });
      expect((res.body as { message: string }).message).toMatch(message);
    });
  }

  it('lists keys whatever time was stored, even one past the year 9999', async () => {
    const { key } = await server().services.keys.create({ change: { plan: 'free' } }, SYSTEM);
    await server().services.keys.setExpiry(key.id, Date.UTC(10000, 0, 1, 23, 58, 59), SYSTEM);
    const res = await adminCall(server(), 'GET', '/admin/v1/keys', { key: await token() });
    expect(res.status).toBe(200);
    const listed = (res.body as Array<{ id: string; expiresAt: string }>).find(
      (k) => k.id === key.id,
    );
    expect(listed?.expiresAt).toBe('9999-12-31T23:59:59.999Z');
  });

  it('returns 415 for a create that is not JSON, and 400 invalid_json for broken JSON', async () => {
    const key = await token();
    const text = await adminCall(server(), 'POST', '/admin/v1/keys', {
      key,
      rawBody: 'plan=free',
      headers: { 'content-type': 'text/plain' },
    });
    expect(text.status).toBe(415);
    const broken = await adminCall(server(), 'POST', '/admin/v1/keys', {
      key,
      rawBody: '{"plan":',
      headers: { 'content-type': 'application/json' },
    });
    expect(broken.status).toBe(400);
    expect(broken.body).toMatchObject({ code: 'invalid_json' });
  });

  it('refuses to roll a revoked key with 409 key_revoked, and prints no secret', async () => {
    const key = await token();
    const made = await adminCall(server(), 'POST', '/admin/v1/keys', {
      key,
      body: { plan: 'free' },
    });
    const { id } = (made.body as { key: { id: string } }).key;
    await adminCall(server(), 'POST', `/admin/v1/keys/${id}/revoke`, { key });
    const roll = await adminCall(server(), 'POST', `/admin/v1/keys/${id}/roll`, { key, body: {} });
    expect(roll.status).toBe(409);
    expect(roll.body).toMatchObject({ code: 'key_revoked', status: 409 });
    expect(JSON.stringify(roll.body)).not.toMatch(/pa_(live|test)_/);
  });
});

import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { call, useServer } from '../helpers/test-server.js';

// On a file: creates go through the SQLite commit worker, as in production.
const server = useServer({ sqliteFile: true });

async function petCount(): Promise<number> {
  return (await server().storage.pets.list({ afterId: 0, limit: 1_000_000 })).length;
}

async function post(
  rawBody: string | Uint8Array | undefined,
  headers: Record<string, string> = {},
) {
  const { key } = await server().createKey();
  const before = await petCount();
  const res = await call(server(), 'POST', '/v1/pets', {
    key,
    ...(rawBody === undefined ? {} : { rawBody }),
    headers: { 'content-type': 'application/json', ...headers },
  });
  expect(await petCount()).toBe(before);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  return res;
}

describe('POST /v1/pets (createPet), when the body is wrong, it answers 4xx and creates nothing', () => {
  it.each([
    ['name is missing', { categoryId: 1 }, 'name is required'],
    ['categoryId is missing', { name: 'A' }, 'categoryId is required'],
    ['name is null', { name: null, categoryId: 1 }, 'name must not be null'],
    ['status is null', { name: 'A', categoryId: 1, status: null }, 'status must not be null'],
    ['name is a number', { name: 5, categoryId: 1 }, 'name must be a string'],
    ['name is empty', { name: '', categoryId: 1 }, 'name must be 1 to 100'],
    ['name is blank', { name: '   ', categoryId: 1 }, 'name must be 1 to 100'],
    ['name has 101 code points', { name: 'é'.repeat(101), categoryId: 1 }, 'name must be 1 to 100'],
    ['name has a newline', { name: 'a\nb', categoryId: 1 }, 'name must be 1 to 100'],
    ['name has DEL', { name: 'a\u007fb', categoryId: 1 }, 'name must be 1 to 100'],
    [
      'categoryId is a string',
      { name: 'A', categoryId: '1' },
      'categoryId must be an integer from 1',
    ],
    ['categoryId is 0', { name: 'A', categoryId: 0 }, 'categoryId must be an integer from 1'],
    [
      'categoryId is negative',
      { name: 'A', categoryId: -5 },
      'categoryId must be an integer from 1',
    ],
    ['categoryId is 1.5', { name: 'A', categoryId: 1.5 }, 'categoryId must be an integer from 1'],
    ['categoryId is true', { name: 'A', categoryId: true }, 'categoryId must be an integer from 1'],
    ['status is adopted', { name: 'A', categoryId: 1, status: 'adopted' }, 'status must be one of'],
    ['an id is sent', { id: 7, name: 'A', categoryId: 1 }, 'Unknown field id'],
    [
      'an unknown field is sent',
      { name: 'A', categoryId: 1, colour: 'red' },
      'Unknown field colour',
    ],
    ['the body is an array', [{ name: 'A', categoryId: 1 }], 'Request body must be a JSON object'],
    ['the body is a string', 'Rex', 'Request body must be a JSON object'],
    ['the body is null', null, 'Request body must be a JSON object'],
  ])('returns 400 invalid_body when %s', async (_case, body, message) => {
    const res = await post(JSON.stringify(body));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'invalid_body', status: 400 });
    expect((res.body as { message: string }).message).toContain(message);
    expect(Object.keys(res.body as object).sort()).toEqual(['code', 'message', 'status']);
  });

  it('returns 400 invalid_body when categoryId is 9223372036854775808', async () => {
    const res = await post('{"name":"A","categoryId":9223372036854775808}');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      code: 'invalid_body',
      message: 'categoryId must be an integer from 1 to 9223372036854775807',
    });
  });

  it('returns 400 invalid_body when categoryId is 1e19 (not exact)', async () => {
    const res = await post('{"name":"A","categoryId":1e19}');
    expect(res.status).toBe(400);
  });

  it('returns 400 invalid_body when name holds a lone surrogate', async () => {
    const res = await post('{"name":"a\\ud800b","categoryId":1}');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'invalid_body' });
  });

  it.each(['{"name":', '{name: "A"}', 'not json', '{"name":"A","categoryId":1}x', ''])(
    'returns 400 invalid_json when the body is %j',
    async (raw) => {
      const res = await post(raw);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_json', status: 400 });
    },
  );

  it('returns 400 invalid_body when the body is missing', async () => {
    const { key } = await server().createKey();
    const res = await call(server(), 'POST', '/v1/pets', { key });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'invalid_body' });
  });

  it.each([
    'text/plain',
    'application/x-www-form-urlencoded',
    'application/xml',
    'application/json-patch+json',
    'text/json',
  ])('returns 415 unsupported_media_type for Content-Type %s', async (type) => {
    const res = await post('{"name":"A","categoryId":1}', { 'content-type': type });
    expect(res.status).toBe(415);
    expect(res.body).toEqual({
      code: 'unsupported_media_type',
      message: 'Send the request body as Content-Type: application/json',
      status: 415,
    });
  });

  it('returns 413 payload_too_large for a body over 16 KiB', async () => {
    const res = await post(JSON.stringify({ name: 'A', categoryId: 1, pad: 'x'.repeat(17_000) }));
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ code: 'payload_too_large', status: 413 });
  });

  it('returns 400 invalid_parameter when Idempotency-Key is longer than 255 characters', async () => {
    const res = await post('{"name":"A","categoryId":1}', { 'idempotency-key': 'k'.repeat(256) });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'invalid_parameter' });
    expect((res.body as { message: string }).message).toContain('idempotency-key');
  });
});

/** The Error body's message, after checking the code and that nothing else is in the body. */
function messageOf(res: { status: number; body: unknown }, code: string): string {
  expect(res.body).toMatchObject({ code, status: res.status });
  expect(Object.keys(res.body as object).sort()).toEqual(['code', 'message', 'status']);
  return (res.body as { message: string }).message;
}

describe('POST /v1/pets, when a number where an integer is required is not exactly an integer', () => {
  it.each([
    ['0.99999999999999999', 'a double would round it to 1'],
    ['9007199254740991.4', 'a double would round it to 9007199254740991'],
    ['1.0000000000000001', 'a double would round it to 1'],
    ['1.5', 'a plain fraction'],
    ['15e-1', 'a fraction written with an exponent'],
    ['9223372036854775806.5', 'a fraction within int64'],
  ])('returns 400 invalid_body for categoryId %s (%s), never a rounded pet', async (number) => {
    const res = await post(`{"name":"A","categoryId":${number}}`);
    expect(res.status).toBe(400);
    expect(messageOf(res, 'invalid_body')).toBe(
      'categoryId must be an integer from 1 to 9223372036854775807',
    );
  });

  it.each(['9223372036854775808.0', '92233720368547758080e-1', '1e400', '9'.repeat(2000)])(
    'returns 400 invalid_body for categoryId %s, an integer beyond int64',
    async (number) => {
      const res = await post(`{"name":"A","categoryId":${number}}`);
      expect(res.status).toBe(400);
      expect(messageOf(res, 'invalid_body')).toBe(
        'categoryId must be an integer from 1 to 9223372036854775807',
      );
    },
  );

  it.each([
    ['{"name":0.99999999999999999,"categoryId":1}', 'name must be a string'],
    ['{"name":"A","categoryId":1,"status":0.5}', 'status must be one of'],
    ['0.5', 'Request body must be a JSON object'],
    ['0.99999999999999999', 'Request body must be a JSON object'],
  ])('returns 400 invalid_body for a fraction elsewhere: %s', async (raw, message) => {
    const res = await post(raw);
    expect(res.status).toBe(400);
    expect(messageOf(res, 'invalid_body')).toContain(message);
  });
});

describe('POST /v1/pets reads every body with one parser and one set of rules', () => {
  it.each([
    ['{"name":"a","name":"b","categoryId":1}', 'name', 12],
    ['{"name":"a","name":"a","categoryId":1}', 'name', 12],
    ['{"name":"a","categoryId":9223372036854775807,"categoryId":1}', 'categoryId', 45],
    ['{"name":"a","categoryId":1,"x":{"k":1,"k":1234567890123456789}}', 'k', 38],
    ['{"name":"a","\\u006eame":"b","categoryId":1}', 'name', 12],
  ])(
    'returns 400 invalid_json for a duplicate key, whatever the values: %s',
    async (raw, key, position) => {
      const res = await post(raw);
      expect(res.status).toBe(400);
      expect(messageOf(res, 'invalid_json')).toBe(
        `Request body is not valid JSON: Duplicate property name "${key}" in JSON at position ${position}`,
      );
    },
  );

  it.each([
    ['65 levels', `{"name":"a","categoryId":1,"x":${'['.repeat(64)}${']'.repeat(64)}}`],
    ['5000 levels and a long number', `${'['.repeat(5000)}12345678901234567${']'.repeat(5000)}`],
    [
      '5000 levels in a field and a long number',
      `{"name":"a","categoryId":12345678901234567,"x":${'['.repeat(5000)}${']'.repeat(5000)}}`,
    ],
    ['2500 objects', `${'{"a":'.repeat(2500)}1${'}'.repeat(2500)}`],
  ])('returns 400 invalid_json for nesting of %s, in words of our own', async (_what, raw) => {
    const res = await post(raw);
    expect(res.status).toBe(400);
    const message = messageOf(res, 'invalid_json');
    expect(message).toMatch(
      /^Request body is not valid JSON: Arrays and objects are nested more than 64 levels deep in JSON at position \d+$/,
    );
    expect(message).not.toMatch(/stack|call/i);
  });

  it('makes a "__proto__" key an unknown field, never the prototype', async () => {
    const res = await post('{"name":"a","categoryId":1,"__proto__":{"status":"sold"}}');
    expect(res.status).toBe(400);
    expect(messageOf(res, 'invalid_body')).toBe(
      'Unknown field __proto__: allowed are name, categoryId, status',
    );
  });

  it('says where the JSON breaks and what was expected', async () => {
    const res = await post('{"name":"Rex"');
    expect(res.status).toBe(400);
    expect(messageOf(res, 'invalid_json')).toBe(
      "Request body is not valid JSON: Expected ',' or '}' after property value in JSON at position 13",
    );
  });
});

describe('POST /v1/pets takes UTF-8 only', () => {
  const utf8 = (text: string) => new TextEncoder().encode(text);
  const bytes = (...parts: (string | number[])[]) =>
    Uint8Array.from(parts.flatMap((part) => (typeof part === 'string' ? [...utf8(part)] : part)));

  it.each([
    ['a byte that starts no character', bytes('{"name":"', [0xff], '","categoryId":1}'), 9],
    ['a lone continuation byte', bytes('{"name":"a', [0x80], '","categoryId":1}'), 10],
    ['an encoded surrogate', bytes('{"name":"', [0xed, 0xa0, 0x80], '","categoryId":1}'), 9],
    ['an overlong encoding of "/"', bytes('{"name":"', [0xc0, 0xaf], '","categoryId":1}'), 9],
    ['a character cut short', bytes('{"name":"', [0xe2, 0x82], '","categoryId":1}'), 9],
    ['a character cut short by the end', bytes('{"name":"a","categoryId":1}', [0xe2, 0x82]), 27],
    ['Latin-1 text', bytes('{"name":"Zo', [0xeb], '","categoryId":1}'), 11],
  ])('returns 400 invalid_json for %s, never a pet with U+FFFD', async (_what, body, offset) => {
    const res = await post(body);
    expect(res.status).toBe(400);
    expect(messageOf(res, 'invalid_json')).toBe(
      `Request body is not valid JSON: it is not valid UTF-8 at byte ${offset}; send the body as UTF-8`,
    );
  });

  it('returns 400 invalid_json for a byte order mark, which RFC 8259 forbids senders to add', async () => {
    const res = await post(bytes([0xef, 0xbb, 0xbf], '{"name":"a","categoryId":1}'));
    expect(res.status).toBe(400);
    expect(messageOf(res, 'invalid_json')).toBe(
      'Request body is not valid JSON: it starts with a byte order mark (EF BB BF); send UTF-8 without one',
    );
  });

  it.each([
    'application/json; charset=utf-16',
    'application/json; charset=UTF-16LE',
    'application/json;charset="utf-16"',
    'application/json; charset=iso-8859-1',
    'application/json; charset=us-ascii',
    'application/json; charset=utf8',
    'application/json; charset="utf-8x"',
    'Application/JSON; Charset=latin1',
    'application/json; charset=utf-8; charset=utf-16',
    'application/json; charset',
    'application/json; charset=',
    'application/json; charset = utf-8',
  ])('returns 415 unsupported_media_type for Content-Type %s', async (type) => {
    const res = await post('{"name":"A","categoryId":1}', { 'content-type': type });
    expect(res.status).toBe(415);
    expect(res.body).toEqual({
      code: 'unsupported_media_type',
      message:
        'Send the request body as UTF-8: Content-Type: application/json, with no charset or charset=utf-8',
      status: 415,
    });
  });
});

describe('POST /v1/pets (createPet), when the body is content-encoded, it answers 415', () => {
  it.each(['gzip', 'GZIP', 'deflate', 'br', 'identity, gzip', 'x-custom'])(
    'returns 415 unsupported_media_type for Content-Encoding %s, naming the coding',
    async (encoding) => {
      const body = encoding.toLowerCase().includes('gzip')
        ? new Uint8Array(gzipSync('{"name":"A","categoryId":1}'))
        : '{"name":"A","categoryId":1}';
      const res = await post(body, { 'content-encoding': encoding });
      expect(res.status).toBe(415);
      expect(res.body).toMatchObject({ code: 'unsupported_media_type', status: 415 });
      expect((res.body as { message: string }).message).toContain(
        encoding.replace('identity, ', '').toLowerCase(),
      );
    },
  );

  it('accepts Content-Encoding identity', async () => {
    const { key } = await server().createKey();
    const res = await call(server(), 'POST', '/v1/pets', {
      key,
      rawBody: '{"name":"A","categoryId":1}',
      headers: { 'content-type': 'application/json', 'content-encoding': 'Identity' },
    });
    expect(res.status).toBe(201);
  });
});

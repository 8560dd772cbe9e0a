import fc from 'fast-check';
import { binaryString } from './code-points.js';
import { METHODS } from 'node:http';
import { IDEMPOTENCY_KEY_MAX_LENGTH } from '../../src/http/apps/public/pets/pet.schema.js';
import { type BodyOutcome, bodyCase } from './json-bodies.js';
import { listCase, rarely, type Verdict } from './queries.js';

/**
 * Whole HTTP/1.1 requests written byte by byte, malformed in every part: method, target, version,
 * headers, framing and body. Where the decisions fix the answer to a well-formed request, the case
 * carries it (`expected`); for the rest only the invariants hold (no 5xx, the Error body).
 */

export interface Expected {
  /** Any of these statuses, each with its code (undefined: a success, no code). */
  answers: Array<{ status: number; code?: string }>;
}

export interface RawCase {
  bytes: Uint8Array;
  method: string;
  expected?: Expected;
  /** What a 200 of GET /v1/pets must respect, when the query was generated as a ListCase. */
  list?: { limit: number; status?: string; afterId?: number };
  steps: string[];
}

/** A key stand-in: the runner replaces it with a real key, unlimited, before sending. */
export const KEY = '{{key}}';

const KNOWN_METHODS = METHODS.filter((m) => m !== 'CONNECT');

const method = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.constantFrom('GET', 'POST', 'HEAD', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'),
  },
  { weight: 3, arbitrary: fc.constantFrom(...KNOWN_METHODS) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      'get',
      'Get',
      'FOO',
      'G@T',
      'GET\t',
      'CONNECT',
      'X'.repeat(40),
      'PRI',
    ),
  },
);

type PathKind = 'pets' | 'pet' | 'unknown-v1' | 'other';

const path = fc.oneof(
  { weight: 5, arbitrary: fc.constant({ path: '/v1/pets', kind: 'pets' as PathKind }) },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom('/v1/pets/1', '/v1/pets/9007199254740991')
      .map((p) => ({ path: p, kind: 'pet' as PathKind })),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('/v1/nope', '/v1/pets/1/extra', '/v1/store/orders')
      .map((p) => ({ path: p, kind: 'unknown-v1' as PathKind })),
  },
  {
    weight: 3,
    arbitrary: fc
      .constantFrom(
        '/healthz',
        '/readyz',
        '/metrics',
        '/v1/openapi.json',
        '/docs',
        '/docs/',
        '/docs/static/index.css',
        '/docs/static/../x',
        '//v1/pets',
        '/v1//pets',
        '/v1/pets/',
        '/v1/%70ets',
        '/v1/pets/%31',
        '/v1/../v1/pets',
        '/v1/./pets',
        '/V1/PETS',
        '/v2/pets',
        '/',
        `/${'a'.repeat(3_000)}`,
        `/v1/pets/${'9'.repeat(100)}`,
        '/v1/pets%00',
        '/v1/pets/%zz',
        '/v1/p\u00E9ts',
        '/v1/pets/\u00E9',
        '*',
        'http://x/v1/pets',
        'v1/pets',
        '/v1/pets;x',
        '/v1/pets#x',
      )
      .map((p) => ({ path: p, kind: 'other' as PathKind })),
  },
);

const version = fc.oneof(
  { weight: 20, arbitrary: fc.constant('HTTP/1.1') },
  {
    weight: 1,
    arbitrary: fc.constantFrom('HTTP/1.0', 'HTTP/2.0', 'HTTP/9.9', 'http/1.1', '', 'HTTP/1.1 x'),
  },
);

type Auth = 'key' | 'none' | 'invalid' | 'two';

interface AuthChoice {
  auth: Auth;
  lines: string[];
}

const authorization: fc.Arbitrary<AuthChoice> = fc.oneof(
  {
    weight: 14,
    arbitrary: fc.constantFrom<AuthChoice>(
      { auth: 'key', lines: [`Authorization: Bearer ${KEY}`] },
      { auth: 'key', lines: [`authorization: bearer ${KEY}`] },
    ),
  },
  { weight: 3, arbitrary: fc.constant<AuthChoice>({ auth: 'none', lines: [] }) },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom(
        'Bearer abc',
        'Basic dXNlcjpwYXNz',
        'Bearer ',
        'Bearer',
        `Bearer ${KEY}x`,
        'Bearer pa_live_0000000000000000000000000000000000000',
        `Token ${KEY}`,
      )
      .map((value): AuthChoice => ({ auth: 'invalid', lines: [`Authorization: ${value}`] })),
  },
  {
    weight: 1,
    arbitrary: fc.constant<AuthChoice>({
      auth: 'two',
      lines: [`Authorization: Bearer ${KEY}`, `Authorization: Bearer ${KEY}`],
    }),
  },
);

/** Content-Types: JSON in UTF-8, another charset, another type, or one whose reading is open. */
type Media = 'json' | 'charset' | 'other' | 'open';

const contentType = fc.oneof(
  {
    weight: 10,
    arbitrary: fc
      .constantFrom(
        'application/json',
        'application/json; charset=utf-8',
        'application/json;charset=UTF-8',
        'application/json; charset="utf-8"',
      )
      .map((v) => ({ media: 'json' as Media, value: v })),
  },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom(
        'application/json; charset=utf-16',
        'application/json; charset=latin1',
        'application/json; charset=utf-8; charset=utf-16',
      )
      .map((v) => ({ media: 'charset' as Media, value: v })),
  },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom(
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/xml',
      )
      .map((v) => ({ media: 'other' as Media, value: v })),
  },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom<string | undefined>(
        undefined,
        '',
        'Application/JSON',
        'application/json;;',
        'application/jsonx',
        'application/vnd.api+json',
        '*/*',
        'application/json ; charset=utf-8',
      )
      .map((v) => ({ media: 'open' as Media, value: v })),
  },
);

type IdempotencyKey = 'none' | 'valid' | 'invalid' | 'open';

const idempotencyKey = fc.oneof(
  { weight: 12, arbitrary: fc.constant({ kind: 'none' as IdempotencyKey, value: '' }) },
  {
    weight: 3,
    arbitrary: fc
      .oneof(fc.constantFrom('k1', 'k2', 'k3', 'a'.repeat(IDEMPOTENCY_KEY_MAX_LENGTH)), fc.uuid())
      .map((value) => ({ kind: 'valid' as IdempotencyKey, value })),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('', 'a'.repeat(IDEMPOTENCY_KEY_MAX_LENGTH + 1), 'x'.repeat(4_000))
      .map((value) => ({ kind: 'invalid' as IdempotencyKey, value })),
  },
  // Bytes Node passes on as obs-text or refuses as framing: no exact answer is owed.
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('a b', '\u00E9t\u00E9', 'a\tb', 'a\u0001b', 'k1\u0000')
      .map((value) => ({ kind: 'open' as IdempotencyKey, value })),
  },
);

/** Header lines that break the framing or the syntax: always an `open` request. */
const badHeader = fc.constantFrom(
  'Bad Name: 1',
  ' folded: continuation',
  'NoColon',
  'X-Nul: a\u0000b',
  'X-Ctl: a\u0001b',
  `X-Big: ${'b'.repeat(20_000)}`,
  'Host: second',
  'Transfer-Encoding: chunked, gzip',
  'Content-Length: abc',
);

const extraHeader = fc.constantFrom(
  'X-Request-Id: trace-1',
  'X-Request-Id: \u00E9\u00E9 bad id',
  `X-Request-Id: ${'r'.repeat(500)}`,
  'Accept: */*',
  'Accept: text/html',
  'Accept-Encoding: gzip, br',
  'Expect: 100-continue',
  'Expect: something-else',
  'Origin: http://evil.example',
  'X-Forwarded-For: 10.0.0.1',
  'Cookie: a=b',
  'Range: bytes=0-1',
  'If-None-Match: *',
  'Upgrade: websocket',
);

type Framing = 'length' | 'none' | 'more' | 'less' | 'chunked' | 'chunked-bad';

const framing = fc.oneof(
  { weight: 12, arbitrary: fc.constant<Framing>('length') },
  { weight: 2, arbitrary: fc.constant<Framing>('chunked') },
  { weight: 1, arbitrary: fc.constantFrom<Framing>('none', 'more', 'less', 'chunked-bad') },
);

const latin1 = (text: string) => Buffer.from(text, 'latin1');

/** Random bytes, not JSON: in Latin-1 every char is one byte, so any byte can occur. */
const junkBody = fc
  .oneof(fc.string({ maxLength: 40 }), binaryString(40))
  .map((s) => Buffer.from(s));

function chunked(body: Uint8Array, sizes: number[]): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (const size of sizes) {
    if (at >= body.length) break;
    const chunk = body.subarray(at, at + Math.max(1, size));
    parts.push(latin1(`${chunk.length.toString(16)}\r\n`), Buffer.from(chunk), latin1('\r\n'));
    at += chunk.length;
  }
  if (at < body.length)
    parts.push(
      latin1(`${(body.length - at).toString(16)}\r\n`),
      Buffer.from(body.subarray(at)),
      latin1('\r\n'),
    );
  parts.push(latin1('0\r\n\r\n'));
  return Buffer.concat(parts);
}

function answersOfBody(
  outcome: BodyOutcome,
  media: Media,
  idempotency: IdempotencyKey,
): Expected | undefined {
  if (media === 'open') return undefined;
  if (media === 'other') return { answers: [{ status: 415, code: 'unsupported_media_type' }] };
  // The charset is read once the body is in, so a body over the limit is refused for its size.
  if (media === 'charset') {
    return {
      answers: [
        outcome.status === 413
          ? { status: 413, code: 'payload_too_large' }
          : { status: 415, code: 'unsupported_media_type' },
      ],
    };
  }
  const own =
    outcome.status === 201 ? { status: 201 } : { status: outcome.status, code: outcome.code };
  if (idempotency === 'invalid') {
    // The body is read and checked before the headers are.
    return {
      answers:
        outcome.status === 201
          ? [{ status: 400, code: 'invalid_parameter' }]
          : [own, { status: 400, code: 'invalid_parameter' }],
    };
  }
  if (idempotency === 'valid' && outcome.status === 201) {
    // The key may have been used before: a replay (201) or another body (422).
    return { answers: [own, { status: 422, code: 'idempotency_key_reused' }] };
  }
  return idempotency === 'open' ? undefined : { answers: [own] };
}

function answersOfList(verdict: Verdict): Expected {
  const bad = { status: 400, code: 'invalid_parameter' };
  return {
    answers:
      verdict === 'ok' ? [{ status: 200 }] : verdict === 'bad' ? [bad] : [{ status: 200 }, bad],
  };
}

export const rawCase: fc.Arbitrary<RawCase> = fc
  .record({
    method,
    target: path,
    query: rarely(listCase, 3),
    version,
    host: fc.oneof(
      { weight: 30, arbitrary: fc.constant<string | undefined>('Host: x') },
      {
        weight: 1,
        arbitrary: fc.constantFrom<string | undefined>(undefined, 'Host: ', 'Host: a b'),
      },
    ),
    authorization,
    contentType,
    idempotencyKey,
    bad: rarely(badHeader, 12),
    extra: fc.array(extraHeader, { maxLength: 2 }),
    body: fc.oneof(
      {
        weight: 5,
        arbitrary: bodyCase.map((c) => ({
          bytes: c.bytes,
          outcome: c.outcome as BodyOutcome | undefined,
        })),
      },
      {
        weight: 1,
        arbitrary: junkBody.map((bytes) => ({ bytes: new Uint8Array(bytes), outcome: undefined })),
      },
      { weight: 2, arbitrary: fc.constant({ bytes: new Uint8Array(0), outcome: undefined }) },
    ),
    framing,
    chunkSizes: fc.array(fc.integer({ min: 1, max: 4_096 }), { minLength: 1, maxLength: 4 }),
    off: fc.integer({ min: 1, max: 10 }),
  })
  .map((c): RawCase => {
    const target = c.query === undefined ? c.target.path : `${c.target.path}?${c.query.query}`;
    const lines = [`${c.method} ${target} ${c.version}`.trimEnd()];
    if (c.host !== undefined) lines.push(c.host);
    lines.push(...c.authorization.lines);
    if (c.contentType.value !== undefined) lines.push(`Content-Type: ${c.contentType.value}`);
    if (c.idempotencyKey.kind !== 'none') lines.push(`Idempotency-Key: ${c.idempotencyKey.value}`);
    lines.push(...c.extra);
    if (c.bad !== undefined) lines.push(c.bad);
    const body = c.body.bytes;
    let payload: Buffer = Buffer.from(body);
    let framingOk = true;
    switch (c.framing) {
      case 'length':
        lines.push(`Content-Length: ${body.length}`);
        break;
      case 'none':
        framingOk = body.length === 0;
        break;
      case 'more':
        lines.push(`Content-Length: ${body.length + c.off}`);
        framingOk = false;
        break;
      case 'less':
        lines.push(`Content-Length: ${Math.max(0, body.length - c.off)}`);
        framingOk = body.length === 0;
        break;
      case 'chunked':
        lines.push('Transfer-Encoding: chunked');
        payload = chunked(body, c.chunkSizes);
        break;
      case 'chunked-bad':
        lines.push('Transfer-Encoding: chunked');
        payload = Buffer.concat([latin1('zz\r\n'), Buffer.from(body), latin1('\r\n0\r\n\r\n')]);
        framingOk = false;
        break;
    }
    // Every case closes its connection, so an answer is read whole whatever its framing.
    lines.push('Connection: close');
    const head = latin1(`${lines.join('\r\n')}\r\n\r\n`);
    const steps = [
      `${c.method} ${target.slice(0, 120)} ${c.version}`,
      `auth ${c.authorization.auth}, content-type ${String(c.contentType.value)}, idempotency ${c.idempotencyKey.kind}, framing ${c.framing}, body ${body.length} bytes`,
      ...(c.bad !== undefined ? [`bad header ${c.bad.slice(0, 40)}`] : []),
      ...(c.query?.steps ?? []),
    ];

    // Only a request that is well-formed in every part has an answer fixed by the decisions.
    const wellFormed =
      KNOWN_METHODS.includes(c.method) &&
      c.version === 'HTTP/1.1' &&
      c.host === 'Host: x' &&
      c.bad === undefined &&
      framingOk &&
      !c.extra.some(
        (h) =>
          h.startsWith('Expect') || h.startsWith('Upgrade') || h.startsWith('X-Request-Id: \u00E9'),
      ) &&
      c.authorization.auth !== 'two' &&
      c.idempotencyKey.kind !== 'open';
    let expected: Expected | undefined;
    if (wellFormed && c.target.kind !== 'other') {
      if (c.authorization.auth !== 'key')
        expected = { answers: [{ status: 401, code: 'unauthorized' }] };
      else if (c.target.kind === 'unknown-v1')
        expected = { answers: [{ status: 404, code: 'not_found' }] };
      else if (
        c.target.kind === 'pets' &&
        c.query === undefined &&
        c.method === 'POST' &&
        c.body.outcome !== undefined
      ) {
        expected = answersOfBody(c.body.outcome, c.contentType.media, c.idempotencyKey.kind);
      } else if (c.target.kind === 'pets' && c.method === 'GET' && c.query !== undefined) {
        expected = answersOfList(c.query.verdict);
      } else if (
        c.target.kind === 'pets' &&
        !['GET', 'HEAD', 'POST', 'OPTIONS'].includes(c.method)
      ) {
        expected = { answers: [{ status: 405, code: 'method_not_allowed' }] };
      } else if (c.target.kind === 'pet' && !['GET', 'HEAD', 'OPTIONS'].includes(c.method)) {
        expected = { answers: [{ status: 405, code: 'method_not_allowed' }] };
      }
    }
    return {
      bytes: new Uint8Array(Buffer.concat([head, payload])),
      method: c.method,
      ...(expected !== undefined ? { expected } : {}),
      ...(c.query !== undefined &&
      c.target.kind === 'pets' &&
      c.method === 'GET' &&
      c.query.verdict === 'ok'
        ? {
            list: {
              limit: c.query.limit,
              ...(c.query.status ? { status: c.query.status } : {}),
              ...(c.query.afterId !== undefined ? { afterId: c.query.afterId } : {}),
            },
          }
        : {}),
      steps,
    };
  });

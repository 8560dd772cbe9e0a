import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GET_PET_SUNSET_AT } from '../../src/domain/pets/deprecation.js';
import { DependencyUnavailableError } from '../../src/domain/errors.js';
import type { Storage } from '../../src/domain/ports.js';
import type { ErrorCode } from '../../src/http/errors/http-error.js';
import {
  describeViolation,
  parseViolations,
  type PrismProxy,
  startPrismProxy,
  type Violation,
} from '../helpers/prism-proxy.js';
import { call, startServer, type TestServer } from '../helpers/test-server.js';
import { overlayStorage } from '../helpers/storage-overlay.js';

/**
 * The test traffic runs through Stoplight Prism's validating proxy, which checks every request and
 * every response against /v1/openapi.json. Requests that break the document on purpose are
 * expected to be reported; a reported response means the service and its document disagree.
 */

type OperationId = 'listPets' | 'createPet' | 'getPet';

interface Exchange {
  operation: OperationId;
  what: string;
  status: number;
  body: unknown;
  headers: Headers;
  requestViolations: Violation[];
  responseViolations: Violation[];
  /** Reports that come from Prism's reading of int64, not from the service or its document. */
  int64Clamps: Violation[];
}

interface RequestOptions {
  key?: string;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
}

const exchanges: Exchange[] = [];

/**
 * Prism (through @stoplight/http-spec 7.1) turns `format: int64` into `maximum: 2^53-1`, so it
 * refuses the categoryIds above 2^53 that the document (integer, int64, no maximum) and the
 * service accept and return exactly. Only that report is set aside, and only for categoryId.
 */
function isInt64Clamp(violation: Violation): boolean {
  return (
    violation.code === 'maximum' &&
    violation.location.at(-1) === 'categoryId' &&
    violation.message.endsWith(`must be <= ${Number.MAX_SAFE_INTEGER}`)
  );
}

type StorageCall = 'list' | 'get' | 'create';
/** Lets a test make an operation's storage call fail: a bug (500) or an outage (503). */
const failing = new Map<StorageCall, () => Error>();
const busy = new Set<string>(['contract-busy']);
function flakyStorage(storage: Storage): Storage {
  const { pets } = storage;
  const fails = <T>(call: StorageCall, run: () => Promise<T>): Promise<T> => {
    const failure = failing.get(call);
    return failure ? Promise.reject(failure()) : run();
  };
  return overlayStorage(storage, {
    pets: {
      list: (query) => fails('list', () => pets.list(query)),
      get: (id) => fails('get', () => pets.get(id)),
      create: (input) => fails('create', () => pets.create(input)),
      // A key in `busy` is held by a first request still running (another instance's).
      createIdempotent: (input, request) =>
        busy.has(request.scope.key)
          ? Promise.resolve({ kind: 'in_progress' })
          : fails('create', () => pets.createIdempotent(input, request)),
    },
  });
}

/** Sends a request while one storage call fails the way `failure` says. */
async function failingWith(
  call: StorageCall,
  failure: () => Error,
  send: () => Promise<Exchange>,
): Promise<Exchange> {
  failing.set(call, failure);
  try {
    return await send();
  } finally {
    failing.delete(call);
  }
}
const bug = () => new Error('disk on fire');
const outage = () => new DependencyUnavailableError('database');

let server: TestServer | undefined;
let proxy: PrismProxy | undefined;
let dir = '';
let documentText = '';
/** A business-plan key for everything that is not about rate limits. */
let key = '';
/** Keys with one scope each: refused with 403 insufficient_scope on the other's operations. */
let readKey = '';
let writeKey = '';
let petId = 0;

beforeAll(async () => {
  // A key is banned on its second request after its first 429 in a window.
  // PUBLIC_BASE_URL can stay as it is: Prism matches request paths against the document's paths
  // (its servers only when a request names one with ?__server=) and forwards to upstream + path.
  server = await startServer({ env: { PETSTORE_BAN_AFTER: '1' }, wrapStorage: flakyStorage });
  const doc = await call(server, 'GET', '/v1/openapi.json');
  expect(doc.status).toBe(200);
  documentText = doc.text;
  dir = mkdtempSync(join(tmpdir(), 'petstore-prism-'));
  const file = join(dir, 'openapi.json');
  writeFileSync(file, documentText);

  ({ key } = await server.createKey('business'));
  ({ key: readKey } = await server.createKey('business', undefined, ['pets:read']));
  ({ key: writeKey } = await server.createKey('business', undefined, ['pets:write']));
  const rex = await server.storage.pets.create({
    name: 'Rex',
    categoryId: 3n,
    status: 'available',
  });
  petId = rex.id;
  await server.storage.pets.create({ name: 'Big', categoryId: 9223372036854775807n });
  await server.storage.pets.create({ name: 'Tom', categoryId: 1n, status: 'sold' });

  proxy = await startPrismProxy(file, `${server.url}/v1`);
});

afterAll(async () => {
  await proxy?.stop();
  await server?.close();
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

function s(): TestServer {
  if (!server) throw new Error('server not started');
  return server;
}

/** Sends a request through the proxy and records what Prism reported about it. */
async function through(
  operation: OperationId,
  what: string,
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<Exchange> {
  if (!proxy) throw new Error('proxy not started');
  const res = await call({ ...s(), url: proxy.url }, method, path, options);
  const all = parseViolations(res.headers.get('sl-violations'));
  const violations = all.filter((v) => !isInt64Clamp(v));
  const exchange: Exchange = {
    operation,
    what,
    status: res.status,
    body: res.body,
    headers: res.headers,
    requestViolations: violations.filter((v) => v.location[0] === 'request'),
    responseViolations: violations.filter((v) => v.location[0] !== 'request'),
    int64Clamps: all.filter(isInt64Clamp),
  };
  exchanges.push(exchange);
  return exchange;
}

/** With a fresh key allowed 1 request a minute, sends `request` until it is answered 429 `code`. */
async function until429(
  code: 'rate_limited' | 'api_key_banned',
  request: (key: string) => Promise<Exchange>,
): Promise<Exchange> {
  const limited = await s().createKey('enterprise', { perMinute: 1, perDay: 100 });
  for (let i = 0; i < 10; i++) {
    const exchange = await request(limited.key);
    if (exchange.status === 429 && errorCode(exchange) === code) return exchange;
  }
  throw new Error(`no 429 ${code} after 10 requests`);
}

function errorCode(exchange: Exchange): unknown {
  const body = exchange.body;
  return typeof body === 'object' && body !== null && 'code' in body ? body.code : undefined;
}

const json = { 'content-type': 'application/json' };
const newPet = { name: 'Rex', categoryId: 3, status: 'available' };

interface Case {
  operation: OperationId;
  status: number;
  /** The error code of the answer; absent for a success. */
  code?: ErrorCode;
  what: string;
  /** The request breaks the document on purpose, so Prism must report it. */
  invalidRequest: boolean;
  send: () => Promise<Exchange>;
}

const list = (what: string, path: string, options: RequestOptions = {}) =>
  through('listPets', what, 'GET', path, options);
const create = (what: string, options: RequestOptions) =>
  through('createPet', what, 'POST', '/pets', options);
const get = (what: string, path: string, options: RequestOptions = {}) =>
  through('getPet', what, 'GET', path, options);

const cases: Case[] = [
  // listPets
  {
    operation: 'listPets',
    status: 200,
    what: 'a page with Link: rel="next", an int64 above 2^53 and a pet without status',
    invalidRequest: false,
    send: () => list('page', '/pets?limit=2', { key }),
  },
  {
    operation: 'listPets',
    status: 200,
    what: 'filtered by status, last page',
    invalidRequest: false,
    send: () => list('filtered', '/pets?status=available&limit=100', { key }),
  },
  {
    operation: 'listPets',
    status: 304,
    what: 'If-None-Match naming the page',
    invalidRequest: false,
    send: async () => {
      const page = await list('to revalidate', '/pets?limit=2', { key });
      const etag = page.headers.get('etag') ?? '';
      return list('revalidated', '/pets?limit=2', { key, headers: { 'if-none-match': etag } });
    },
  },
  {
    operation: 'listPets',
    status: 400,
    code: 'invalid_parameter',
    what: 'limit=0',
    invalidRequest: true,
    send: () => list('limit=0', '/pets?limit=0', { key }),
  },
  {
    operation: 'listPets',
    status: 403,
    code: 'insufficient_scope',
    what: 'a write-only key',
    invalidRequest: false,
    send: () => list('write-only key', '/pets', { key: writeKey }),
  },
  {
    operation: 'listPets',
    status: 401,
    code: 'unauthorized',
    what: 'no key',
    invalidRequest: true,
    send: () => list('no key', '/pets'),
  },
  {
    operation: 'listPets',
    status: 429,
    code: 'rate_limited',
    what: 'over the minute',
    invalidRequest: false,
    send: () => until429('rate_limited', (k) => list('rate limits', '/pets', { key: k })),
  },
  {
    operation: 'listPets',
    status: 429,
    code: 'api_key_banned',
    what: 'banned',
    invalidRequest: false,
    send: () => until429('api_key_banned', (k) => list('rate limits', '/pets', { key: k })),
  },
  {
    operation: 'listPets',
    status: 500,
    code: 'internal_error',
    what: 'storage fails',
    invalidRequest: false,
    send: () => failingWith('list', bug, () => list('storage fails', '/pets', { key })),
  },
  {
    operation: 'listPets',
    status: 503,
    code: 'unavailable',
    what: 'the database is down',
    invalidRequest: false,
    send: () => failingWith('list', outage, () => list('storage fails', '/pets', { key })),
  },
  // createPet
  {
    operation: 'createPet',
    status: 201,
    what: 'with an Idempotency-Key',
    invalidRequest: false,
    send: () =>
      create('created', { key, body: newPet, headers: { 'idempotency-key': 'contract-rex' } }),
  },
  {
    operation: 'createPet',
    status: 201,
    what: 'replayed (Idempotent-Replayed: true)',
    invalidRequest: false,
    send: async () => {
      const again = await create('replayed', {
        key,
        body: newPet,
        headers: { 'idempotency-key': 'contract-rex' },
      });
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      return again;
    },
  },
  {
    operation: 'createPet',
    status: 201,
    what: 'without status, with an int64 categoryId',
    invalidRequest: false,
    send: () => create('no status', { key, body: { name: 'Max', categoryId: 2 ** 60 } }),
  },
  {
    // Prism parses a JSON body itself and answers a malformed one on its own, without forwarding
    // it; an empty body is the malformed JSON that reaches the service through the proxy.
    operation: 'createPet',
    status: 400,
    code: 'invalid_json',
    what: 'empty JSON body',
    invalidRequest: true,
    send: () => create('empty body', { key, rawBody: '', headers: json }),
  },
  {
    operation: 'createPet',
    status: 400,
    code: 'invalid_body',
    what: 'missing categoryId, blank name',
    invalidRequest: true,
    send: () => create('invalid body', { key, body: { name: '' } }),
  },
  {
    operation: 'createPet',
    status: 400,
    code: 'invalid_body',
    what: 'unknown field',
    invalidRequest: true,
    send: () => create('unknown field', { key, body: { ...newPet, id: 5 } }),
  },
  {
    operation: 'createPet',
    status: 400,
    code: 'invalid_parameter',
    what: 'Idempotency-Key over 255 characters',
    invalidRequest: true,
    send: () =>
      create('long Idempotency-Key', {
        key,
        body: newPet,
        headers: { 'idempotency-key': 'k'.repeat(256) },
      }),
  },
  {
    operation: 'createPet',
    status: 403,
    code: 'insufficient_scope',
    what: 'a read-only key',
    invalidRequest: false,
    send: () => create('read-only key', { key: readKey, body: newPet }),
  },
  {
    operation: 'createPet',
    status: 401,
    code: 'unauthorized',
    what: 'a well-formed but unknown key',
    invalidRequest: false,
    send: () =>
      create('unknown key', { key: 'pa_live_000000000000000000000000000000000000', body: newPet }),
  },
  {
    operation: 'createPet',
    status: 409,
    code: 'idempotency_key_in_use',
    what: 'the Idempotency-Key is held by a running request',
    invalidRequest: false,
    send: async () => {
      return create('in use', {
        key,
        body: newPet,
        headers: { 'idempotency-key': 'contract-busy' },
      });
    },
  },
  {
    operation: 'createPet',
    status: 413,
    code: 'payload_too_large',
    what: 'a body over 16 KiB',
    invalidRequest: true,
    send: () => create('too large', { key, body: { name: 'x'.repeat(20_000), categoryId: 1 } }),
  },
  {
    operation: 'createPet',
    status: 415,
    code: 'unsupported_media_type',
    what: 'a form body',
    invalidRequest: true,
    send: () =>
      create('form body', {
        key,
        rawBody: 'name=Rex',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
  },
  {
    operation: 'createPet',
    status: 422,
    code: 'idempotency_key_reused',
    what: 'the Idempotency-Key again with another body',
    invalidRequest: false,
    send: () =>
      create('reused', {
        key,
        body: { name: 'Other', categoryId: 3 },
        headers: { 'idempotency-key': 'contract-rex' },
      }),
  },
  {
    operation: 'createPet',
    status: 429,
    code: 'rate_limited',
    what: 'over the minute',
    invalidRequest: false,
    send: () => until429('rate_limited', (k) => create('rate limits', { key: k, body: newPet })),
  },
  {
    operation: 'createPet',
    status: 429,
    code: 'api_key_banned',
    what: 'banned',
    invalidRequest: false,
    send: () => until429('api_key_banned', (k) => create('rate limits', { key: k, body: newPet })),
  },
  {
    operation: 'createPet',
    status: 500,
    code: 'internal_error',
    what: 'storage fails',
    invalidRequest: false,
    send: () => failingWith('create', bug, () => create('storage fails', { key, body: newPet })),
  },
  {
    operation: 'createPet',
    status: 503,
    code: 'unavailable',
    what: 'the database is down',
    invalidRequest: false,
    send: () => failingWith('create', outage, () => create('storage fails', { key, body: newPet })),
  },
  // getPet (deprecated)
  {
    operation: 'getPet',
    status: 200,
    what: 'with Deprecation, Sunset and Link',
    invalidRequest: false,
    send: () => get('found', `/pets/${petId}`, { key }),
  },
  {
    operation: 'getPet',
    status: 304,
    what: 'If-None-Match naming the pet',
    invalidRequest: false,
    send: async () => {
      const pet = await get('to revalidate', `/pets/${petId}`, { key });
      const etag = pet.headers.get('etag') ?? '';
      return get('revalidated', `/pets/${petId}`, { key, headers: { 'if-none-match': etag } });
    },
  },
  {
    operation: 'getPet',
    status: 400,
    code: 'invalid_parameter',
    what: 'petId not an integer',
    invalidRequest: true,
    send: () => get('petId=abc', '/pets/abc', { key }),
  },
  {
    operation: 'getPet',
    status: 403,
    code: 'insufficient_scope',
    what: 'a write-only key',
    invalidRequest: false,
    send: () => get('write-only key', `/pets/${petId}`, { key: writeKey }),
  },
  {
    operation: 'getPet',
    status: 401,
    code: 'unauthorized',
    what: 'no key',
    invalidRequest: true,
    send: () => get('no key', `/pets/${petId}`),
  },
  {
    operation: 'getPet',
    status: 404,
    code: 'not_found',
    what: 'no such pet',
    invalidRequest: false,
    send: () => get('no such pet', '/pets/999999999', { key }),
  },
  {
    operation: 'getPet',
    status: 429,
    code: 'rate_limited',
    what: 'over the minute',
    invalidRequest: false,
    send: () => until429('rate_limited', (k) => get('rate limits', `/pets/${petId}`, { key: k })),
  },
  {
    operation: 'getPet',
    status: 429,
    code: 'api_key_banned',
    what: 'banned',
    invalidRequest: false,
    send: () => until429('api_key_banned', (k) => get('rate limits', `/pets/${petId}`, { key: k })),
  },
  {
    operation: 'getPet',
    status: 500,
    code: 'internal_error',
    what: 'storage fails',
    invalidRequest: false,
    // An id never served, so the answer cannot come from the cache of pets.
    send: () => failingWith('get', bug, () => get('storage fails', '/pets/424242', { key })),
  },
  {
    operation: 'getPet',
    status: 503,
    code: 'unavailable',
    what: 'the database is down',
    invalidRequest: false,
    send: () => failingWith('get', outage, () => get('storage fails', '/pets/424243', { key })),
  },
  {
    // The proxy forwards to the same server, so moving its clock past the sunset is enough.
    operation: 'getPet',
    status: 410,
    code: 'gone',
    what: 'after the sunset',
    invalidRequest: false,
    send: async () => {
      const before = s().clock.now();
      s().clock.set(GET_PET_SUNSET_AT + 1_000);
      try {
        return await get('gone', `/pets/${petId}`, { key });
      } finally {
        s().clock.set(before);
      }
    },
  },
];

describe('the test traffic through the Prism validating proxy', () => {
  it.each(cases)('$operation $status $code: $what', async (c) => {
    const first = exchanges.length;
    const exchange = await c.send();
    expect(exchange.status, JSON.stringify(exchange.body)).toBe(c.status);
    // The answer is the service's, not one Prism made up.
    if (c.code !== undefined) expect(errorCode(exchange)).toBe(c.code);
    for (const sent of exchanges.slice(first)) {
      expect(sent.responseViolations.map(describeViolation), `${sent.what}: response`).toEqual([]);
    }
    // Prism and the service agree on which requests break the document.
    if (c.invalidRequest) expect(exchange.requestViolations).not.toEqual([]);
    else expect(exchange.requestViolations.map(describeViolation)).toEqual([]);
  });

  it('covered every response status the document declares, for every operation', () => {
    const documented = new Set<string>();
    const doc = JSON.parse(documentText) as {
      paths: Record<string, Record<string, { operationId: string; responses: object }>>;
    };
    for (const item of Object.values(doc.paths)) {
      for (const op of Object.values(item)) {
        for (const status of Object.keys(op.responses))
          documented.add(`${op.operationId} ${status}`);
      }
    }
    const seen = new Set(exchanges.map((e) => `${e.operation} ${e.status}`));
    expect([...documented].filter((name) => !seen.has(name))).toEqual([]);
    const count = (pick: (e: Exchange) => Violation[]) =>
      exchanges.reduce((n, e) => n + pick(e).length, 0);
    // The int64 values above 2^53 did go through the proxy, so the limitation above was met.
    expect(count((e) => e.int64Clamps)).toBeGreaterThan(0);
    console.log(
      `prism: ${exchanges.length} exchanges, ${documented.size} documented responses covered, ` +
        `${count((e) => e.requestViolations)} request violations (deliberately invalid requests), ` +
        `${count((e) => e.responseViolations)} response violations, ` +
        `${count((e) => e.int64Clamps)} int64 reports set aside (Prism reads int64 as at most 2^53-1)`,
    );
  });
});

describe('the proxy check itself', () => {
  it('reports responses that break the document, errors and warnings alike', async () => {
    // The same service behind a document that is wrong on purpose: Pet.name an integer, and
    // getPet's 404 left out.
    const broken = JSON.parse(documentText) as {
      components: { schemas: { Pet: { properties: { name: { type: string } } } } };
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    broken.components.schemas.Pet.properties.name.type = 'integer';
    const getPet = broken.paths['/pets/{petId}']?.get;
    if (getPet === undefined) throw new Error('no getPet in the document');
    delete getPet.responses['404'];
    const file = join(dir, 'broken.json');
    writeFileSync(file, JSON.stringify(broken));
    const wrong = await startPrismProxy(file, `${s().url}/v1`);
    try {
      const violations = async (path: string) => {
        const res = await call({ ...s(), url: wrong.url }, 'GET', path, { key });
        return parseViolations(res.headers.get('sl-violations')).map(describeViolation);
      };
      expect(await violations(`/pets/${petId}`)).toEqual([
        expect.stringMatching(/^Error at response\.body\.name: /),
      ]);
      expect(await violations('/pets/999999999')).toEqual([
        expect.stringMatching(/^Warning at response: Unable to match the returned status code/),
      ]);
    } finally {
      await wrong.stop();
    }
  });
});

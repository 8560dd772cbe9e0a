import { readFileSync } from 'node:fs';
import type { TSchema } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { type ErrorBody, ERRORS, statusOf } from '../../src/http/errors/error-table.js';
import { ErrorSchema } from '../../src/http/errors/error.schema.js';
import type { ErrorCode } from '../../src/http/errors/http-error.js';
import {
  NewPetSchema,
  PetSchema,
  PetsSchema,
  PetStatusSchema,
} from '../../src/http/apps/public/pets/pet.schema.js';
import {
  createValidatorCompiler,
  type JsonSchema,
} from '../../src/http/validation/validator-compiler.js';
import { call, useServer } from '../helpers/test-server.js';

const server = useServer({ env: { PUBLIC_BASE_URL: 'https://pets.example.com' } });

interface Operation {
  operationId: string;
  deprecated?: boolean;
  responses: Record<
    string,
    {
      description?: string;
      content?: Record<
        string,
        { schema: { $ref?: string }; examples?: Record<string, { value: ErrorBody }> }
      >;
      headers?: Record<
        string,
        { description?: string; required?: boolean; schema?: Record<string, unknown> }
      >;
    }
  >;
  parameters?: { name: string; in: string; example?: unknown }[];
  security?: Record<string, string[]>[];
}
type Document = {
  openapi: string;
  info: { version: string; description: string };
  servers: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: {
    schemas: Record<string, unknown>;
    securitySchemes: Record<string, { type: string; scheme: string }>;
  };
  security: Record<string, unknown[]>[];
};

async function document(): Promise<Document> {
  const res = await call(server(), 'GET', '/v1/openapi.json');
  expect(res.status).toBe(200);
  return res.body as Document;
}

describe('GET /v1/openapi.json', () => {
  it('is an OpenAPI 3.1 document of interface version 1.0.0, served without a key', async () => {
    const doc = await document();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
    expect(doc.servers).toEqual([
      { url: 'https://pets.example.com/v1', description: 'production' },
    ]);
  });

  it('names the three operations, marks getPet deprecated and nothing else', async () => {
    const doc = await document();
    expect(Object.keys(doc.paths).sort()).toEqual(['/pets', '/pets/{petId}']);
    expect(doc.paths['/pets']?.get?.operationId).toBe('listPets');
    expect(doc.paths['/pets']?.post?.operationId).toBe('createPet');
    expect(doc.paths['/pets/{petId}']?.get?.operationId).toBe('getPet');
    expect(doc.paths['/pets/{petId}']?.get?.deprecated).toBe(true);
    expect(doc.paths['/pets']?.get?.deprecated).toBeUndefined();
  });

  it('declares bearer authentication for every operation', async () => {
    const doc = await document();
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({
      type: 'http',
      scheme: 'bearer',
    });
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
  });

  it('documents every error status with the Error schema', async () => {
    const doc = await document();
    const expected: Record<string, string[]> = {
      'get /pets': ['400', '401', '429', '500'],
      'post /pets': ['400', '401', '409', '413', '415', '422', '429', '500'],
      'get /pets/{petId}': ['400', '401', '404', '410', '429', '500'],
    };
    for (const [name, statuses] of Object.entries(expected)) {
      const [method, path] = name.split(' ') as [string, string];
      const op = doc.paths[path]?.[method];
      for (const status of statuses) {
        expect(
          op?.responses[status]?.content?.['application/json']?.schema.$ref,
          `${name} ${status}`,
        ).toBe('#/components/schemas/Error');
      }
    }
    expect(doc.components.schemas.Error).toBeDefined();
    expect(doc.components.schemas.Pet).toBeDefined();
    expect(doc.components.schemas.NewPet).toBeDefined();
  });

  it('names the scope each operation needs in its security requirement, and documents its 403', async () => {
    const doc = await document();
    const scopes = Object.fromEntries(
      Object.values(doc.paths).flatMap((item) =>
        Object.values(item).map((op) => [op.operationId, op.security]),
      ),
    );
    expect(scopes).toEqual({
      listPets: [{ bearerAuth: ['pets:read'] }],
      getPet: [{ bearerAuth: ['pets:read'] }],
      createPet: [{ bearerAuth: ['pets:write'] }],
    });
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({
      type: 'http',
      scheme: 'bearer',
    });
    for (const item of Object.values(doc.paths)) {
      for (const op of Object.values(item)) {
        const forbidden = op.responses['403'];
        expect(
          forbidden?.content?.['application/json']?.examples?.insufficient_scope?.value.code,
        ).toBe('insufficient_scope');
      }
    }
  });

  it('documents the rate-limit headers on every response as required, and Retry-After on 429 and 503', async () => {
    const doc = await document();
    const rateLimitHeaders = [
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-RateLimit-Reset',
      'RateLimit-Policy',
      'RateLimit',
    ];
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        for (const [status, response] of Object.entries(op.responses)) {
          const headers = Object.keys(response.headers ?? {});
          expect(headers, `${method} ${path} ${status}`).toEqual(
            expect.arrayContaining(rateLimitHeaders),
          );
          expect(headers.includes('Retry-After'), `${method} ${path} ${status}`).toBe(
            status === '429' || status === '503',
          );
          expect(headers.includes('WWW-Authenticate'), `${method} ${path} ${status}`).toBe(
            status === '401' || status === '403',
          );
          for (const name of [...rateLimitHeaders, 'Retry-After', 'Location', 'WWW-Authenticate']) {
            if (name in (response.headers ?? {})) {
              expect(
                response.headers?.[name]?.required,
                `${method} ${path} ${status} ${name}`,
              ).toBe(true);
            }
          }
        }
      }
    }
    // Sent only when more pets exist.
    expect(doc.paths['/pets']?.get?.responses['200']?.headers?.Link?.required).toBeUndefined();
    expect(doc.info.description).toMatch(/\| free \| 60 \| 1000 \|/);
  });

  it('gives every response header a schema with a type, so validators check its value', async () => {
    const doc = await document();
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        for (const [status, response] of Object.entries(op.responses)) {
          for (const [name, header] of Object.entries(response.headers ?? {})) {
            expect(header.schema?.type, `${method} ${path} ${status} ${name}`).toMatch(
              /^(integer|string)$/,
            );
            expect(header.description, `${method} ${path} ${status} ${name}`).toBeTruthy();
          }
        }
      }
    }
  });

  it('describes int64 fields as integer/int64 without a rounded maximum', async () => {
    const doc = await document();
    const pet = doc.components.schemas.Pet as {
      properties: Record<string, Record<string, unknown>>;
    };
    expect(pet.properties.categoryId).toMatchObject({
      type: 'integer',
      format: 'int64',
      minimum: 1,
    });
    expect(pet.properties.categoryId?.maximum).toBeUndefined();
  });

  it('lists every error code of the error table, as the README does', async () => {
    const doc = await document();
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    for (const [code, { status, when }] of Object.entries(ERRORS)) {
      expect(doc.info.description, code).toContain(`| \`${code}\` | ${status} | ${when} |`);
      expect(readme, `README lacks ${code}`).toMatch(
        new RegExp(`\\|\\s*\`${code}\`\\s*\\|\\s*${status}\\s*\\|`),
      );
    }
  });
});

/** Checks a value as the service checks a request body against the schema, e.g. NewPet. */
function accepts(schema: TSchema, value: unknown): string | undefined {
  const compile = createValidatorCompiler([
    PetStatusSchema,
    NewPetSchema,
    PetSchema,
    PetsSchema,
    ErrorSchema,
  ] as JsonSchema[]);
  const validate = compile({ schema, method: 'POST', url: '/', httpPart: 'body' });
  const result = validate(value) as { error?: Error };
  return result.error?.message;
}

function examplesOf(doc: Document, name: string): unknown[] {
  const schema = doc.components.schemas[name] as { examples?: unknown[] };
  expect(schema.examples, name).toBeDefined();
  return schema.examples ?? [];
}

describe('the examples in /v1/openapi.json', () => {
  it('are values the service accepts and answers, for bodies, responses and errors', async () => {
    const doc = await document();
    for (const pet of examplesOf(doc, 'NewPet')) expect(accepts(NewPetSchema, pet)).toBeUndefined();
    for (const pet of examplesOf(doc, 'Pet')) expect(accepts(PetSchema, pet)).toBeUndefined();
    const pages = examplesOf(doc, 'Pets') as unknown[][];
    for (const pet of pages.flat()) expect(accepts(PetSchema, pet)).toBeUndefined();
    expect(pages.flat().length).toBeGreaterThan(1);
    for (const body of examplesOf(doc, 'Error')) expect(accepts(ErrorSchema, body)).toBeUndefined();

    // The request example, sent as it is, creates the pet the response example shows.
    const { key } = await server().createKey('pro');
    const [newPet] = examplesOf(doc, 'NewPet');
    const created = await call(server(), 'POST', '/v1/pets', { key, body: newPet });
    expect(created.status).toBe(201);
    const [pet] = examplesOf(doc, 'Pet');
    expect(created.body).toEqual({ ...(pet as object), id: (created.body as { id: number }).id });
  });

  it('give the parameters values the service accepts', async () => {
    const doc = await document();
    const { key } = await server().createKey('pro');
    const limit = doc.paths['/pets']?.get?.parameters?.find((p) => p.name === 'limit');
    const petId = doc.paths['/pets/{petId}']?.get?.parameters?.find((p) => p.name === 'petId');
    expect(limit?.example).toBeTypeOf('number');
    expect(petId?.example).toBeTypeOf('number');
    const page = await call(server(), 'GET', `/v1/pets?limit=${String(limit?.example)}`, { key });
    expect(page.status).toBe(200);
    const one = await call(server(), 'GET', `/v1/pets/${String(petId?.example)}`, { key });
    expect([200, 404]).toContain(one.status);
  });

  it('show each error response with one example per code it lists, as the service answers it', async () => {
    const doc = await document();
    const shown = new Map<string, ErrorBody>();
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        for (const [status, response] of Object.entries(op.responses)) {
          const media = response.content?.['application/json'];
          if (media?.schema.$ref !== '#/components/schemas/Error') continue;
          const where = `${method} ${path} ${status}`;
          // The description names each code the examples show, in the same order.
          const named = [...(response.description ?? '').matchAll(/`([a-z_]+)`:/g)].map(
            (m) => m[1],
          );
          expect(Object.keys(media.examples ?? {}), where).toEqual(named);
          expect(named.length, where).toBeGreaterThan(0);
          for (const [code, { value }] of Object.entries(media.examples ?? {})) {
            expect(value, where).toMatchObject({ code, status: Number(status) });
            expect(statusOf(code as ErrorCode), where).toBe(Number(status));
            expect(accepts(ErrorSchema, value), where).toBeUndefined();
            shown.set(`${op.operationId} ${code}`, value);
          }
        }
      }
    }

    // Every example a single request can cause is the service's own answer, word for word.
    const s = server();
    const { key } = await s.createKey('pro');
    const json = { 'content-type': 'application/json' };
    const answers: Record<string, Promise<{ body: unknown }>> = {
      'listPets invalid_parameter': call(s, 'GET', '/v1/pets?limit=0', { key }),
      'listPets unauthorized': call(s, 'GET', '/v1/pets'),
      'getPet invalid_parameter': call(s, 'GET', '/v1/pets/abc', { key }),
      'getPet not_found': call(s, 'GET', '/v1/pets/7', { key }),
      'createPet invalid_parameter': call(s, 'POST', '/v1/pets', {
        key,
        body: { name: 'Rex', categoryId: 3 },
        headers: { 'idempotency-key': 'k'.repeat(256) },
      }),
      'createPet invalid_body': call(s, 'POST', '/v1/pets', {
        key,
        body: { name: 'Rex', categoryId: 0 },
      }),
      'createPet invalid_json': call(s, 'POST', '/v1/pets', {
        key,
        rawBody: '{"name":"Rex"',
        headers: json,
      }),
      'createPet unsupported_media_type': call(s, 'POST', '/v1/pets', { key, rawBody: 'name=Rex' }),
      'createPet payload_too_large': call(s, 'POST', '/v1/pets', {
        key,
        rawBody: JSON.stringify({ name: 'x'.repeat(17_000), categoryId: 1 }),
        headers: json,
      }),
    };
    for (const [name, answer] of Object.entries(answers)) {
      expect(shown.get(name), name).toEqual((await answer).body);
    }
    const first = {
      key,
      body: { name: 'Rex', categoryId: 3 },
      headers: { 'idempotency-key': 'ex' },
    };
    expect((await call(s, 'POST', '/v1/pets', first)).status).toBe(201);
    const reused = await call(s, 'POST', '/v1/pets', {
      ...first,
      body: { name: 'Max', categoryId: 3 },
    });
    expect(shown.get('createPet idempotency_key_reused')).toEqual(reused.body);
  });
});

describe('GET /docs', () => {
  it('sends "Try it out" to the server that served the page; the document keeps PUBLIC_BASE_URL', async () => {
    const res = await call(server(), 'GET', '/docs/json');
    expect(res.status).toBe(200);
    const docs = res.body as Document;
    // Relative to /docs/json: the same origin, and the same path prefix behind a proxy.
    expect(docs.servers).toEqual([{ url: '../v1', description: 'This server' }]);
    expect(new URL(docs.servers[0]?.url ?? '', `${server().url}/docs/json`).href).toBe(
      `${server().url}/v1`,
    );
    const { servers, ...rest } = docs;
    const { servers: published, ...same } = await document();
    expect(published).toEqual([{ url: 'https://pets.example.com/v1', description: 'production' }]);
    expect(servers).not.toEqual(published);
    expect(rest).toEqual(same);
  });

  it('lets the page load and call only this server', async () => {
    for (const path of ['/docs', '/docs/static/swagger-ui-bundle.js', '/docs/json']) {
      const res = await call(server(), 'GET', path);
      expect(res.status, path).toBe(200);
      const policy = res.headers.get('content-security-policy') ?? '';
      const directives = new Map(
        policy
          .split(';')
          .map((d) => d.trim().split(/\s+/))
          .filter(([name]) => name)
          .map(([name, ...values]) => [name, values]),
      );
      expect(directives.get('default-src'), path).toEqual(["'self'"]);
      expect(directives.get('connect-src'), path).toEqual(["'self'"]);
      expect(directives.has('upgrade-insecure-requests'), path).toBe(false);
      for (const [name, values] of directives) {
        // 'self', 'none' and data: only: no https:, no other host.
        for (const value of values)
          expect(value, `${path} ${name}`).toMatch(/^('self'|'none'|data:)$/);
      }
    }
  });
});

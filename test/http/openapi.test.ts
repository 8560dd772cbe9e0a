import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_STATUS } from '../../src/http/errors.js';
import { call, useServer } from '../helpers/test-server.js';

const server = useServer({ env: { PUBLIC_BASE_URL: 'https://pets.example.com' } });

interface Operation {
  operationId: string;
  deprecated?: boolean;
  responses: Record<
    string,
    {
      content?: Record<string, { schema: { $ref?: string } }>;
      headers?: Record<string, { description?: string; schema?: Record<string, unknown> }>;
    }
  >;
  parameters?: { name: string; in: string }[];
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

  it('documents the rate-limit headers on every response, and Retry-After on 429', async () => {
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
            status === '429',
          );
        }
      }
    }
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
    for (const [code, status] of Object.entries(ERROR_STATUS)) {
      expect(doc.info.description, code).toContain(`| \`${code}\` | ${status} |`);
      expect(readme, `README lacks ${code}`).toMatch(
        new RegExp(`\\|\\s*\`${code}\`\\s*\\|\\s*${status}\\s*\\|`),
      );
    }
  });
});

import type { FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { expect } from 'vitest';
import { buildAdminApp } from '../../../src/http/apps/admin/admin-app.js';
import type { Storage } from '../../../src/domain/ports.js';
import { createServices, type Services } from '../../../src/services.js';
import {
  call,
  logInto,
  type ServerOptions,
  startServer,
  type TestServer,
  useForFile,
} from '../../helpers/test-server.js';

/** A pet API server plus the admin listener on the same storage, as main.ts runs them. */
export interface AdminTestServer {
  pets: TestServer;
  admin: { url: string; app: FastifyInstance };
  services: Services;
  /** A fresh admin token, made as `petstore admin-tokens create` makes one. */
  createToken(name?: string): Promise<{ id: string; token: string }>;
  /** Every admin response seen so far, for the contract check. */
  responses: AdminResponse[];
  /** The admin idempotency store of the storage under test. */
  storage(): Storage['adminIdempotency'];

  close(): Promise<void>;
}

export interface AdminResponse {
  method: string;
  path: string;
  status: number;
  headers: Headers;
  body: unknown;
}

export async function startAdminServer(options: ServerOptions = {}): Promise<AdminTestServer> {
  const pets = await startServer(options);
  // One logger for the app and its services, as server-main.ts wires them (key audit lines too).
  const logging = logInto(options.logLines);
  const services = await createServices(pets.config, {
    clock: pets.clock,
    storage: pets.storage,
    ...(logging.logger ? { log: logging.logger } : {}),
  });
  const app = await buildAdminApp({ services, ...logging });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  return {
    pets,
    admin: { url: `http://127.0.0.1:${port}`, app },
    services,
    responses: [],
    storage: () => pets.storage.adminIdempotency,
    async createToken(name = 'test') {
      const { record, token } = await services.admin.tokens.create(name);
      return { id: record.id, token };
    },
    async close() {
      await app.close();
      await services.close();
      await pets.close();
    },
  };
}

export function useAdminServer(options: ServerOptions = {}): () => AdminTestServer {
  return useForFile(
    'admin server',
    () => startAdminServer(options),
    async (server) => {
      await checkResponsesAgainstDocument(server);
      await server.close();
    },
  );
}

/** Calls the admin listener; the response is recorded for the contract check at the end. */
export async function adminCall(
  server: AdminTestServer,
  method: string,
  path: string,
  options: Parameters<typeof call>[3] = {},
): Promise<Awaited<ReturnType<typeof call>>> {
  const response = await call({ ...server.pets, url: server.admin.url }, method, path, options);
  server.responses.push({ method, path, ...response });
  return response;
}

type Doc = {
  paths: Record<string, Record<string, { responses: Record<string, ResponseDoc> }>>;
  components: { schemas: Record<string, unknown> };
};
type ResponseDoc = {
  headers?: Record<string, { required?: boolean }>;
  content?: Record<string, { schema: unknown }>;
};

/** The documented operation a concrete path falls under, e.g. /keys/key_x/plan -> /keys/{keyId}/plan. */
function operationOf(doc: Doc, method: string, path: string) {
  const bare = path.replace(/^\/admin\/v1/, '').split('?')[0] ?? '';
  for (const [template, item] of Object.entries(doc.paths)) {
    const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
    if (pattern.test(bare)) return item[method.toLowerCase()];
  }
  return undefined;
}

/**
 * Every live admin response is checked against the admin OpenAPI document: its status is
 * documented for the operation, its body valid against the documented schema, and every header the
 * document says is always sent is there. Responses to paths the document does not describe (404s,
 * 405s) must still carry the Error body.
 */
export async function checkResponsesAgainstDocument(server: AdminTestServer): Promise<void> {
  const res = await call(
    { ...server.pets, url: server.admin.url },
    'GET',
    '/admin/v1/openapi.json',
  );
  expect(res.status).toBe(200);
  const doc = res.body as Doc;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  for (const [name, schema] of Object.entries(doc.components.schemas)) {
    ajv.addSchema(schema as object, `#/components/schemas/${name}`);
  }
  const compiled = new Map<unknown, ValidateFunction>();
  const problems: string[] = [];
  for (const r of server.responses) {
    const where = `${r.method} ${r.path} -> ${r.status}`;
    const operation = operationOf(doc, r.method, r.path);
    if (operation === undefined || r.method === 'HEAD') {
      const b = r.body as { code?: unknown; status?: unknown };
      if (
        r.method !== 'HEAD' &&
        r.path !== '/admin/v1/openapi.json' &&
        (typeof b?.code !== 'string' || b.status !== r.status)
      ) {
        problems.push(`${where}: undocumented path without the Error body`);
      }
      continue;
    }
    const documented = operation.responses[String(r.status)];
    if (documented === undefined) {
      problems.push(`${where}: status not documented`);
      continue;
    }
    for (const [header, doc] of Object.entries(documented.headers ?? {})) {
      if (doc.required === true && !r.headers.has(header)) problems.push(`${where}: no ${header}`);
    }
    const schema = documented.content?.['application/json']?.schema;
    if (schema === undefined) continue;
    let validate = compiled.get(schema);
    if (validate === undefined) {
      validate = ajv.compile(schema as object);
      compiled.set(schema, validate);
    }
    if (!validate(r.body)) problems.push(`${where}: ${ajv.errorsText(validate.errors)}`);
  }
  expect(problems).toEqual([]);
}

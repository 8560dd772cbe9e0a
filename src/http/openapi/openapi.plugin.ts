import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../../config/config.js';
import { PLAN_LIMITS } from '../../domain/rate-limits/plans.js';
import { ADDRESS_LIMIT_PER_MINUTE } from '../../domain/rate-limits/rate-limiter.js';
import { ERRORS } from '../errors/error-table.js';
import { API_SECURITY_SCHEME, RATE_LIMIT_HEADERS } from './openapi-responses.js';
import { API_SCOPE, isUnder, type PrefixScope } from '../scopes.js';

/** The one error table, as a Markdown table body for a document's description. */
export const ERROR_TABLE = Object.entries(ERRORS)
  .map(([code, { status, when }]) => `| \`${code}\` | ${status} | ${when} |`)
  .join('\n');

const PLAN_TABLE = Object.entries(PLAN_LIMITS)
  .map(([plan, limits]) => `| ${plan} | ${limits.perMinute} | ${limits.perDay} |`)
  .join('\n');

const DESCRIPTION = `Browse and manage animals available for adoption.

Every operation needs an API key: \`Authorization: Bearer pa_live_...\`.

Pages are ordered by id; follow the \`Link: rel="next"\` header to walk them. Ids and categoryIds are 64-bit integers written exactly.

listPets and getPet answer with an \`ETag\`: send it back in \`If-None-Match\` and an unchanged answer is 304 with no body. Their bodies of 1 KiB or more come compressed (\`br\` or \`gzip\`) when \`Accept-Encoding\` allows it.

## Rate limits

Every request to \`${API_SCOPE.prefix}\` counts against your key's plan, in fixed windows aligned to UTC (the minute from second 0, the day from 00:00 UTC); a request refused with 429 counts in neither.

| plan | per minute | per day |
|---|---|---|
${PLAN_TABLE}
| enterprise | agreed per key | agreed per key |

Every response carries \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and \`X-RateLimit-Reset\` (Unix seconds) for the window with the fewest requests left, and \`RateLimit-Policy\` / \`RateLimit\` for every window. Over a limit: 429 \`rate_limited\` with \`Retry-After\` in seconds. Wait at least that long, then back off exponentially with jitter. A key that sends more than a few requests after a 429 in the same window is banned for a while: 429 \`api_key_banned\`, \`Retry-After\` until the ban ends.

Requests without a valid key (and to this document) share ${ADDRESS_LIMIT_PER_MINUTE} per minute per client address.

## Errors

Every error is \`{code, message, status}\`:

| code | status | when |
|---|---|---|
${ERROR_TABLE}`;

interface ResponseDoc {
  headers?: Record<string, { required?: boolean }>;
}
export interface OperationDoc {
  responses?: Record<string, ResponseDoc>;
}

/**
 * Headers sent with every response that documents them, whatever the outcome; a client may rely on
 * them. (Link is left optional: listPets sends it only when more pets exist.)
 */
const ALWAYS_SENT = new Set([
  ...Object.keys(RATE_LIMIT_HEADERS),
  'Retry-After',
  'WWW-Authenticate',
  'Location',
  'Deprecation',
  'Sunset',
  'ETag',
  'Cache-Control',
  'Vary',
]);

/** @fastify/swagger has no way to say a response header is required, so it is said here. */
export function markAlwaysSentHeaders(paths: Record<string, Record<string, OperationDoc>>): void {
  for (const item of Object.values(paths)) {
    for (const operation of Object.values(item)) {
      for (const response of Object.values(operation.responses ?? {})) {
        for (const [name, header] of Object.entries(response.headers ?? {})) {
          if (ALWAYS_SENT.has(name)) header.required = true;
        }
      }
    }
  }
}

/** The address this instance serves first, then the other environment's when it is configured. */
function servers(config: Config): { url: string; description: string }[] {
  const other = config.otherEnvironment;
  return [
    { url: config.publicBaseUrl + API_SCOPE.prefix, description: config.environment },
    ...(other === undefined
      ? []
      : [{ url: other.baseUrl + API_SCOPE.prefix, description: other.name }]),
  ];
}

/** What differs between the pet API's document and the admin API's. */
export interface OpenApiDocument {
  readonly title: string;
  readonly description: string;
  readonly servers: { url: string; description: string }[];
  readonly tags: { name: string; description: string }[];
  /** The one bearer scheme every operation needs. */
  readonly security: { readonly name: string; readonly description: string };
  /** Only this scope's operations are the interface; health, docs and metrics stay out of it. */
  readonly scope: PrefixScope;
  /** List paths relative to the server URL (which then ends in the scope's prefix). */
  readonly pathsBelowPrefix?: boolean;
}

/**
 * Registers @fastify/swagger so that it generates an OpenAPI 3.1 document from the route schemas,
 * the same ones that validate requests, so the two cannot drift apart. Must be registered before
 * the routes it describes.
 */
export async function registerOpenApi(app: FastifyInstance, doc: OpenApiDocument): Promise<void> {
  const { prefix } = doc.scope;
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: doc.title, version: '1.0.0', description: doc.description },
      servers: doc.servers,
      tags: doc.tags,
      components: {
        securitySchemes: {
          [doc.security.name]: {
            type: 'http',
            scheme: 'bearer',
            description: doc.security.description,
          },
        },
      },
      security: [{ [doc.security.name]: [] }],
    },
    // Shared schemas keep their own names in components.schemas.
    refResolver: {
      buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`),
    },
    transform: ({ schema, url }) => ({
      schema: isUnder(doc.scope, url) ? schema : { ...schema, hide: true },
      url:
        doc.pathsBelowPrefix === true && url.startsWith(prefix)
          ? url.slice(prefix.length) || '/'
          : url,
    }),
    transformObject: (document) => {
      if (!('openapiObject' in document)) return document.swaggerObject;
      const paths = document.openapiObject.paths as
        Record<string, Record<string, OperationDoc>> | undefined;
      if (paths !== undefined) markAlwaysSentHeaders(paths);
      return document.openapiObject;
    },
  });
}

/** The pet API's document. Must be registered before the routes it describes. */
export const openApiPlugin = fp<{ config: Config }>(
  async (app, { config }) => {
    await registerOpenApi(app, {
      title: 'Pet Adoption Service',
      description: DESCRIPTION,
      servers: servers(config),
      tags: [{ name: 'Pets', description: 'Animals available for adoption.' }],
      security: {
        name: API_SECURITY_SCHEME,
        description:
          'An API key, e.g. pa_live_ followed by 36 letters and digits. Each operation names the scope the key needs in its `security` requirement: `pets:read` (listPets, getPet) or `pets:write` (createPet). A key without it gets 403 `insufficient_scope`.',
      },
      scope: API_SCOPE,
    });
  },
  { name: 'openapi' },
);

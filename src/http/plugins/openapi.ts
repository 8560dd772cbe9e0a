import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config/config.js';
import { GET_PET_SUNSET_AT } from '../../domain/pets/deprecation.js';
import { PLAN_LIMITS } from '../../domain/rate-limits/plans.js';
import { ADDRESS_LIMIT_PER_MINUTE } from '../../domain/rate-limits/rate-limiter.js';
import { type ErrorBody, ERROR_STATUS, type ErrorCode } from '../errors.js';
import { RATE_LIMIT_HEADERS } from '../openapi-responses.js';

const ERROR_TABLE = Object.entries(ERROR_STATUS)
  .map(([code, status]) => `| \`${code}\` | ${status} |`)
  .join('\n');

const PLAN_TABLE = Object.entries(PLAN_LIMITS)
  .map(([plan, limits]) => `| ${plan} | ${limits.perMinute} | ${limits.perDay} |`)
  .join('\n');

const DESCRIPTION = `Browse and manage animals available for adoption.

Every operation needs an API key: \`Authorization: Bearer pa_live_...\`.

Pages are ordered by id; follow the \`Link: rel="next"\` header to walk them. Ids and categoryIds are 64-bit integers written exactly.

## Rate limits

Every request to \`/v1\` counts against your key's plan, in fixed windows aligned to UTC (the minute from second 0, the day from 00:00 UTC); a request refused with 429 counts in neither.

| plan | per minute | per day |
|---|---|---|
${PLAN_TABLE}
| enterprise | agreed per key | agreed per key |

Every response carries \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and \`X-RateLimit-Reset\` (Unix seconds) for the window with the fewest requests left, and \`RateLimit-Policy\` / \`RateLimit\` for every window. Over a limit: 429 \`rate_limited\` with \`Retry-After\` in seconds. Wait at least that long, then back off exponentially with jitter. A key that sends more than a few requests after a 429 in the same window is banned for a while: 429 \`api_key_banned\`, \`Retry-After\` until the ban ends.

Requests without a valid key (and to this document) share ${ADDRESS_LIMIT_PER_MINUTE} per minute per client address.

## Errors

Every error is \`{code, message, status}\`:

| code | status |
|---|---|
${ERROR_TABLE}`;

/** What the service answers for each code, as an example body in the document. */
const ERROR_MESSAGES: Record<ErrorCode, string> = {
  bad_request: 'The request path is not valid percent-encoding',
  invalid_json:
    "Request body is not valid JSON: Expected ',' or '}' after property value in JSON at position 13",
  invalid_body: 'categoryId must be an integer from 1 to 9223372036854775807',
  invalid_parameter: 'limit must be an integer from 1 to 100',
  unauthorized: 'Missing API key: send it as Authorization: Bearer <key>',
  not_found: 'No pet has id 7',
  method_not_allowed: 'DELETE is not allowed here; use GET, HEAD',
  idempotency_key_in_use:
    'A request with this Idempotency-Key is still being processed; retry after it finishes',
  gone: `GET /v1/pets/{petId} was removed on ${new Date(GET_PET_SUNSET_AT).toUTCString()}; use GET /v1/pets with a status filter`,
  payload_too_large: 'Request body is larger than 16 KiB',
  unsupported_media_type: 'Send the request body as Content-Type: application/json',
  idempotency_key_reused:
    'This Idempotency-Key was already used with a different request body; use a new key for a new pet',
  rate_limited:
    'Rate limit of 60 requests per minute reached for this API key; retry after 17 seconds (Retry-After)',
  api_key_banned:
    'This API key is banned for 900 more seconds for sending requests after 429 responses; wait for Retry-After, then back off exponentially',
  internal_error:
    'Something went wrong on our side; retry later, and quote the X-Request-Id if it persists',
  service_unavailable: 'The database does not answer; retry shortly',
};

/** Where an operation refuses a parameter of its own, its example names that parameter. */
const OPERATION_ERROR_MESSAGES: Record<string, Partial<Record<ErrorCode, string>>> = {
  createPet: { invalid_parameter: 'idempotency-key must be 1 to 255 characters' },
  getPet: { invalid_parameter: 'petId must be an integer from 1 to 9223372036854775807' },
};

interface MediaDoc {
  schema?: { $ref?: string };
  examples?: Record<string, { summary: string; value: ErrorBody }>;
}
interface ResponseDoc {
  description?: string;
  content?: Record<string, MediaDoc>;
  headers?: Record<string, { required?: boolean }>;
}
interface OperationDoc {
  operationId?: string;
  responses?: Record<string, ResponseDoc>;
}

/**
 * Headers sent with every response that documents them, whatever the outcome; a client may rely on
 * them. (Link is left optional: listPets sends it only when more pets exist.)
 */
const ALWAYS_SENT = new Set([
  ...Object.keys(RATE_LIMIT_HEADERS),
  'Retry-After',
  'Location',
  'Deprecation',
  'Sunset',
]);

/** @fastify/swagger has no way to say a response header is required, so it is said here. */
function markAlwaysSentHeaders(paths: Record<string, Record<string, OperationDoc>>): void {
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

/**
 * Gives each error response of each operation one example body per code it can carry (the codes
 * its description lists, e.g. "Error: rate_limited, api_key_banned"), so the docs page shows a
 * 429 as a 429 rather than the Error schema's one generic example.
 */
function addErrorExamples(paths: Record<string, Record<string, OperationDoc>>): void {
  for (const item of Object.values(paths)) {
    for (const operation of Object.values(item)) {
      const own = OPERATION_ERROR_MESSAGES[operation.operationId ?? ''] ?? {};
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const media = response.content?.['application/json'];
        if (media?.schema?.$ref !== '#/components/schemas/Error') continue;
        const ofStatus = (Object.keys(ERROR_STATUS) as ErrorCode[]).filter(
          (code) => String(ERROR_STATUS[code]) === status,
        );
        // In the order the description lists them; all codes of the status if it names none.
        const words = (response.description ?? '').split(/[^a-z_]+/);
        const listed = ofStatus
          .filter((code) => words.includes(code))
          .sort((a, b) => words.indexOf(a) - words.indexOf(b));
        const examples: MediaDoc['examples'] = {};
        for (const code of listed.length > 0 ? listed : ofStatus) {
          const message = own[code] ?? ERROR_MESSAGES[code];
          examples[code] = { summary: code, value: { code, message, status: ERROR_STATUS[code] } };
        }
        response.content = { ...response.content, 'application/json': { ...media, examples } };
      }
    }
  }
}

/**
 * The OpenAPI 3.1 document is generated from the route schemas, the same ones that validate
 * requests, so the two cannot drift apart. Must be registered before the routes it describes.
 */
export async function registerOpenApi(app: FastifyInstance, config: Config): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Pet Adoption Service', version: '1.0.0', description: DESCRIPTION },
      servers: [{ url: `${config.publicBaseUrl}/v1`, description: config.environment }],
      tags: [{ name: 'Pets', description: 'Animals available for adoption.' }],
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description: 'An API key, e.g. pa_live_ followed by 36 letters and digits.',
          },
        },
      },
      security: [{ bearerAuth: [] }],
    },
    // Shared schemas keep their own names in components.schemas.
    refResolver: {
      buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`),
    },
    // Only the /v1 operations are the interface; health, docs and metrics stay out of it.
    transform: ({ schema, url }) => ({
      schema: url.startsWith('/v1/') ? schema : { ...schema, hide: true },
      url,
    }),
    transformObject: (document) => {
      if (!('openapiObject' in document)) return document.swaggerObject;
      const paths = document.openapiObject.paths as
        Record<string, Record<string, OperationDoc>> | undefined;
      if (paths !== undefined) {
        addErrorExamples(paths);
        markAlwaysSentHeaders(paths);
      }
      return document.openapiObject;
    },
  });
}

/**
 * Content-Security-Policy of the docs page and its assets: everything from this server, nothing
 * from anywhere else. connect-src 'self' lets "Try it out" call this server. Unlike
 * @fastify/swagger-ui's built-in policy (staticCSP: true) it allows no https: fonts and styles and
 * no validator.swagger.io badge, and does not upgrade requests to https, which would break the page
 * where the service is reached over plain http.
 */
const DOCS_CSP: Record<string, string[]> = {
  'default-src': ["'self'"],
  'base-uri': ["'self'"],
  'connect-src': ["'self'"],
  'font-src': ["'self'", 'data:'],
  'form-action': ["'self'"],
  'frame-ancestors': ["'self'"],
  'img-src': ["'self'", 'data:'],
  'object-src': ["'none'"],
  'script-src': ["'self'"],
  'script-src-attr': ["'none'"],
  'style-src': ["'self'"],
};

export async function registerDocs(app: FastifyInstance): Promise<void> {
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: {
      // Without Swagger's top bar: its logo is an SVG with an inline <style> that the policy below
      // refuses, and its box for loading another document could only reach this server anyway.
      layout: 'BaseLayout',
      deepLinking: true,
      displayOperationId: true,
      displayRequestDuration: true,
      tryItOutEnabled: true,
      persistAuthorization: true,
      validatorUrl: null,
    },
    theme: { title: 'Pet Adoption Service API' },
    // "Try it out" calls the server that served the page, whatever address the browser used
    // (PUBLIC_BASE_URL may name another, e.g. 127.0.0.1 for HOST=0.0.0.0, and connect-src 'self'
    // would refuse it). Relative to the page's document at <prefix>/docs/json, so a path prefix
    // added by a proxy is kept. /v1/openapi.json keeps PUBLIC_BASE_URL.
    transformSpecification: (document) => ({
      ...document,
      servers: [{ url: '../v1', description: 'This server' }],
    }),
    // Swagger UI's own assets are served from the package, so the page works with no network.
    staticCSP: DOCS_CSP,
  });
}

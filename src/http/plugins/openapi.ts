import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config/config.js';
import { ERROR_STATUS } from '../errors.js';

const ERROR_TABLE = Object.entries(ERROR_STATUS)
  .map(([code, status]) => `| \`${code}\` | ${status} |`)
  .join('\n');

const DESCRIPTION = `Browse and manage animals available for adoption.

Every operation needs an API key: \`Authorization: Bearer pa_live_...\`.

Pages are ordered by id; follow the \`Link: rel="next"\` header to walk them. Ids and categoryIds are 64-bit integers written exactly.

Every error is \`{code, message, status}\`:

| code | status |
|---|---|
${ERROR_TABLE}`;

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
  });
}

export async function registerDocs(app: FastifyInstance): Promise<void> {
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: {
      deepLinking: true,
      tryItOutEnabled: true,
      persistAuthorization: true,
      validatorUrl: null,
    },
    // Swagger UI's own assets are served from the package, so the page works with no network.
    staticCSP: true,
  });
}

import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Config } from '../../../config/config.js';
import type { AdminAdmissionService } from '../../../domain/admin-tokens/admin-admission.js';
import type { AdminIdempotency } from '../../../domain/admin-tokens/admin-idempotency.js';
import type { KeyManagementService } from '../../../domain/api-keys/key-management-service.js';
import { createAdminGuard } from './admin-token-guard.js';
import { createBaseApp } from '../base-app.js';
import { ErrorSchema } from '../../errors/error.schema.js';
import { refusalWarnings } from '../../server/api-server.js';
import { refuseOtherMethods } from '../../methods.js';
import { noRouteFor, refuseUnrouted } from '../../not-found.js';
import { ERROR_TABLE, registerOpenApi } from '../../openapi/openapi.plugin.js';
import { ADMIN_SCHEMAS } from './key.schema.js';
import { registerKeyRoutes } from './keys.routes.js';
import { ADMIN_SCOPE, CONSOLE_SCOPE, isUnder } from '../../scopes.js';
import { loadConsoleFiles, registerConsole } from './console.route.js';
import type { JsonSchema } from '../../validation/validator-compiler.js';

/** What the admin app uses, out of the process's services. */
export interface AdminAppServices {
  readonly config: Config;
  readonly keys: KeyManagementService;
  readonly admin: {
    readonly admission: AdminAdmissionService;
    readonly idempotency: AdminIdempotency;
  };
}

const SCHEMAS = [...ADMIN_SCHEMAS, ErrorSchema] as unknown as JsonSchema[];
const GET_HEAD = ['GET', 'HEAD'];

const DESCRIPTION = `Manage the API keys of the Pet Adoption Service over their whole life.

Served only on the admin listener (\`ADMIN_PORT\`), never on the pet API's. Every operation needs an admin token, created with \`petstore admin-tokens create --name LABEL\`: \`Authorization: Bearer pa_admin_...\`. An API key does not open it. Every change is recorded in the audit trail under the token's id.

Requests without a valid admin token share the per-address budget of requests without a key to the pet API; past it, 429 \`rate_limited\` before any token is looked up.

## Errors

Every error is \`{code, message, status}\`:

| code | status | when |
|---|---|---|
${ERROR_TABLE}`;

/**
 * The admin listener: the admin API under /admin/v1 and the operator console at /admin/ that calls
 * it, and nothing else (no /v1, no /docs, no health endpoints), on the same base as the pet API's (src/http/apps/base-app.ts). The caller owns
 * listening and closing (src/server-main.ts, tests).
 */
export async function buildAdminApp(deps: {
  services: AdminAppServices;
  logger?: FastifyBaseLogger;
  /** The console's files; read from the build (dist/console) unless given. */
  consoleFiles?: ReturnType<typeof loadConsoleFiles>;
}): Promise<FastifyInstance> {
  const { config, keys, admin } = deps.services;
  const guard = createAdminGuard(admin.admission, 'admin_token');
  const warnRefused = refusalWarnings();
  const app = await createBaseApp({
    config,
    ...(deps.logger ? { logger: deps.logger.child({ listener: 'admin' }) } : {}),
    schemas: SCHEMAS,
    onConnectionRefused: (self, cap, address) => warnRefused(self.log, cap, address),
    beforeFrameworkError: async (request, reply) => {
      if (isUnder(ADMIN_SCOPE, request.url)) await guard(request, reply);
    },
    // A request refused for its framing draws on its address's budget, as the document does.
    beforeFramingRefusal: createAdminGuard(admin.admission, 'address'),
  });
  app.decorateRequest('adminToken', undefined);
  app.decorateRequest('adminTokenSecret', undefined);
  // Outside the admin API and the console nothing is served: 404 before any body is read.
  app.addHook(
    'onRequest',
    refuseUnrouted((url) => isUnder(CONSOLE_SCOPE, url)),
  );

  await registerOpenApi(app, {
    title: 'Pet Adoption Service: admin API',
    description: DESCRIPTION,
    servers: [
      {
        url: `http://${config.admin?.host ?? '127.0.0.1'}:${config.admin?.port ?? 8081}${ADMIN_SCOPE.prefix}`,
        description: 'the admin listener',
      },
    ],
    tags: [
      { name: 'Keys', description: 'API keys over their life.' },
      { name: 'Audit', description: 'Who changed which key, when, and how.' },
    ],
    security: {
      name: 'adminToken',
      description: 'An admin token: pa_admin_ followed by 36 letters and digits.',
    },
    scope: ADMIN_SCOPE,
    pathsBelowPrefix: true,
  });

  app.get(
    ADMIN_SCOPE.documentPath,
    { schema: { hide: true }, onRequest: createAdminGuard(admin.admission, 'address') },
    async () => app.swagger(),
  );
  refuseOtherMethods(app, ADMIN_SCOPE.documentPath, GET_HEAD);
  registerConsole(app, {
    files: deps.consoleFiles === undefined ? loadConsoleFiles() : deps.consoleFiles,
    onRequest: createAdminGuard(admin.admission, 'address'),
  });

  await app.register(
    async (scope) => {
      scope.addHook('onRequest', guard);
      scope.addHook('onRequest', refuseUnrouted());
      registerKeyRoutes(scope, { keys, idempotency: admin.idempotency });
      refuseOtherMethods(scope, '/keys', ['GET', 'HEAD', 'POST']);
      refuseOtherMethods(scope, '/keys/:keyId', GET_HEAD);
      refuseOtherMethods(scope, '/keys/:keyId/plan', ['PUT']);
      refuseOtherMethods(scope, '/keys/:keyId/expiry', ['PUT']);
      for (const action of ['roll', 'revoke', 'unban']) {
        refuseOtherMethods(scope, `/keys/:keyId/${action}`, ['POST']);
      }
      refuseOtherMethods(scope, '/keys/:keyId/usage', GET_HEAD);
      refuseOtherMethods(scope, '/audit', GET_HEAD);
      scope.setNotFoundHandler(async (request) => {
        throw noRouteFor(request);
      });
    },
    { prefix: ADMIN_SCOPE.prefix },
  );
  return app;
}

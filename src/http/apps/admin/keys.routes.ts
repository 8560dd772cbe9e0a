import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type {
  AdminIdempotency,
  StoredResponse,
} from '../../../domain/admin-tokens/admin-idempotency.js';
import type {
  Actor,
  KeyManagementService,
  PlanChange,
} from '../../../domain/api-keys/key-management-service.js';
import { domainErrors } from '../../../domain/errors.js';
import { customLimitsProblem, type Plan } from '../../../domain/rate-limits/plans.js';
import { KEY_LIST_LIMIT } from '../../../domain/api-keys/key-listing.js';
import { parseRfc3339, RFC3339_HINT } from '../../../domain/rfc3339.js';
import { httpErrors, type ErrorCode } from '../../errors/http-error.js';
import { ADMIN_SCOPE } from '../../scopes.js';
import { adminErrors, adminJson } from './admin-responses.js';
import {
  AuditQuerySchema,
  AuditSchema,
  CreateKeyBodySchema,
  IdempotencyHeaderSchema,
  KeyParamsSchema,
  KeySchema,
  KeysQuerySchema,
  KeysSchema,
  NewKeySchema,
  RollBodySchema,
  SetExpiryBodySchema,
  SetPlanBodySchema,
  SetScopesBodySchema,
  UsageQuerySchema,
  UsageSchema,
} from './key.schema.js';

export interface KeyRoutesDependencies {
  keys: KeyManagementService;
  idempotency: AdminIdempotency;
}

const DEFAULT_GRACE_SECONDS = 86_400;
const TAGS = ['Keys'];

/** How a change to one existing key with a JSON body can be refused (setKeyPlan, setKeyScopes, setKeyExpiry). */
const KEY_CHANGE_ERRORS: readonly ErrorCode[] = [
  'invalid_body',
  'invalid_json',
  'invalid_parameter',
  'key_not_found',
  'key_changed',
  'payload_too_large',
  'unsupported_media_type',
  'idempotency_key_in_use',
  'idempotency_key_reused',
];

const REPLAYED = {
  'Idempotent-Replayed': {
    type: 'string',
    description:
      '`true` when this is the stored response of an earlier request with the same Idempotency-Key.',
  },
};

/** Who is calling: the admin token the guard verified. Every change is audited under its id. */
function actorOf(request: FastifyRequest): Actor {
  const token = request.adminToken;
  if (token === undefined) throw new Error('admin route reached without an admin token');
  return { kind: 'admin_token', id: token.id };
}

/** Every admin call leaves a line naming its token (reads too; changes also go to the audit trail). */
function logCall(request: FastifyRequest, operation: string, keyId?: string): void {
  request.log.info({ adminTokenId: request.adminToken?.id, operation, keyId }, 'admin call');
}

function planChange(body: { plan: Plan; perMinute?: number; perDay?: number }): PlanChange {
  const problem = customLimitsProblem(body.plan, body);
  if (problem === 'only_for_enterprise') {
    throw httpErrors.invalidBody('perMinute and perDay are only for plan enterprise');
  }
  if (
    problem === 'enterprise_needs_both' ||
    body.perMinute === undefined ||
    body.perDay === undefined
  ) {
    if (body.plan === 'enterprise') {
      throw httpErrors.invalidBody('plan enterprise needs both perMinute and perDay');
    }
    return { plan: body.plan };
  }
  return { plan: 'enterprise', perMinute: body.perMinute, perDay: body.perDay };
}

function instant(field: string, value: string): number {
  const at = parseRfc3339(value);
  if (at === undefined) throw httpErrors.invalidBody(`${field} must be ${RFC3339_HINT}`);
  return at;
}

/** Runs a change once per Idempotency-Key (when one is sent), and answers it. */
async function idempotent(
  deps: KeyRoutesDependencies,
  request: FastifyRequest,
  reply: FastifyReply,
  fingerprinted: unknown,
  operation: () => Promise<StoredResponse>,
): Promise<FastifyReply> {
  const key = request.headers['idempotency-key'];
  const token = request.adminToken;
  const secret = request.adminTokenSecret;
  const result =
    typeof key === 'string' && token !== undefined && secret !== undefined
      ? await deps.idempotency.run(
          { tokenId: token.id, token: secret, key },
          fingerprinted,
          operation,
        )
      : { ...(await operation()), replayed: false };
  if (result.replayed) void reply.header('idempotent-replayed', 'true');
  // A create (a replayed one too) names the key it made.
  const made = result.body as { key?: { id?: unknown } } | null;
  if (result.status === 201 && typeof made?.key?.id === 'string') {
    void reply.header('location', `${ADMIN_SCOPE.prefix}/keys/${made.key.id}`);
  }
  return reply.code(result.status).send(result.body);
}

export function registerKeyRoutes(app: FastifyInstance, deps: KeyRoutesDependencies): void {
  const api = app.withTypeProvider<TypeBoxTypeProvider>();
  const { keys } = deps;
  const params = KeyParamsSchema;

  api.post(
    '/keys',
    {
      schema: {
        operationId: 'createKey',
        summary: 'Create an API key',
        description:
          'Issues a key; its secret is in this response only. Send an `Idempotency-Key` to retry safely: the same key and body within 24 hours return the first response again (the same secret), with `Idempotent-Replayed: true`.',
        tags: TAGS,
        headers: IdempotencyHeaderSchema,
        body: CreateKeyBodySchema,
        response: {
          201: adminJson('The key and its secret.', Type.Ref(NewKeySchema), {
            Location: { type: 'string', description: 'Path of the new key.' },
            ...REPLAYED,
          }),
          ...adminErrors([
            'invalid_body',
            'invalid_json',
            'invalid_parameter',
            'idempotency_key_in_use',
            'payload_too_large',
            'unsupported_media_type',
            'idempotency_key_reused',
          ]),
        },
      },
    },
    async (request, reply) => {
      const actor = actorOf(request);
      logCall(request, 'createKey');
      const { body } = request;
      const change = planChange(body);
      const expiresAt = body.expiresAt === undefined ? null : instant('expiresAt', body.expiresAt);
      return idempotent(deps, request, reply, { operation: 'createKey', body }, async () => {
        const created = await keys.create(
          {
            change,
            ...(body.name === undefined ? {} : { name: body.name }),
            ...(body.scopes === undefined ? {} : { scopes: body.scopes }),
            expiresAt,
          },
          actor,
        );
        return { status: 201, body: created };
      });
    },
  );

  api.get(
    '/keys',
    {
      schema: {
        operationId: 'listKeys',
        summary: 'List API keys',
        description:
          'A page of keys in the shape of `petstore keys list --json`, never a secret: oldest first unless `sort` and `order` say otherwise, filtered by `state`, `plan` and `label`. When more keys follow, a `Link: <...>; rel="next"` header gives the URL of the next page.',
        tags: TAGS,
        querystring: KeysQuerySchema,
        response: {
          200: adminJson('The keys.', Type.Ref(KeysSchema), {
            Link: {
              type: 'string',
              description:
                'RFC 8288 link to the next page (rel="next"), present only when more keys follow.',
            },
          }),
          ...adminErrors(['invalid_parameter']),
        },
      },
    },
    async (request, reply) => {
      logCall(request, 'listKeys');
      const { limit, cursor, state, plan, label, sort, order } = request.query;
      const shape = {
        sort: sort ?? 'created',
        order: order ?? 'asc',
        ...(state === undefined ? {} : { state }),
        ...(plan === undefined ? {} : { plan }),
        ...(label === undefined || label === '' ? {} : { label }),
      };
      const page = await keys.page({
        ...shape,
        limit: limit ?? KEY_LIST_LIMIT.default,
        ...(cursor === undefined ? {} : { cursor }),
      });
      if (page.next !== undefined) {
        // Every parameter the page was asked with, limit first and cursor last, as listPets does.
        const query = new URLSearchParams();
        query.set('limit', String(limit ?? KEY_LIST_LIMIT.default));
        for (const [name, value] of Object.entries(shape)) query.set(name, value);
        query.set('cursor', page.next);
        void reply.header('link', `<${ADMIN_SCOPE.prefix}/keys?${query.toString()}>; rel="next"`);
      }
      return page.keys;
    },
  );

  api.get(
    '/keys/:keyId',
    {
      schema: {
        operationId: 'getKey',
        summary: 'Get an API key',
        tags: TAGS,
        params,
        response: {
          200: adminJson('The key.', Type.Ref(KeySchema)),
          ...adminErrors(['invalid_parameter', 'key_not_found']),
        },
      },
    },
    async (request) => {
      const { keyId } = request.params;
      logCall(request, 'getKey', keyId);
      const key = await keys.get(keyId);
      if (key === undefined) throw domainErrors.keyNotFound(keyId);
      return key;
    },
  );

  api.put(
    '/keys/:keyId/plan',
    {
      schema: {
        operationId: 'setKeyPlan',
        summary: "Change a key's plan",
        description:
          'Same key, same secret. Requests already counted in the current minute and day stay counted; in force on every instance within 1 s with Redis, 5 s without.',
        tags: TAGS,
        params,
        headers: IdempotencyHeaderSchema,
        body: SetPlanBodySchema,
        response: {
          200: adminJson('The key with its new limits.', Type.Ref(KeySchema), REPLAYED),
          ...adminErrors(KEY_CHANGE_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const { keyId } = request.params;
      const actor = actorOf(request);
      logCall(request, 'setKeyPlan', keyId);
      const change = planChange(request.body);
      return idempotent(
        deps,
        request,
        reply,
        { operation: 'setKeyPlan', keyId, body: request.body },
        async () => ({ status: 200, body: await keys.setPlan(keyId, change, actor) }),
      );
    },
  );

  api.put(
    '/keys/:keyId/scopes',
    {
      schema: {
        operationId: 'setKeyScopes',
        summary: "Change a key's scopes",
        description:
          'Same key, same secret. A request the key may no longer make gets 403 insufficient_scope (and still counts against its limits); in force on every instance within 1 s with Redis, 5 s without.',
        tags: TAGS,
        params,
        headers: IdempotencyHeaderSchema,
        body: SetScopesBodySchema,
        response: {
          200: adminJson('The key with its new scopes.', Type.Ref(KeySchema), REPLAYED),
          ...adminErrors(KEY_CHANGE_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const { keyId } = request.params;
      const actor = actorOf(request);
      logCall(request, 'setKeyScopes', keyId);
      const { scopes } = request.body;
      return idempotent(
        deps,
        request,
        reply,
        { operation: 'setKeyScopes', keyId, body: request.body },
        async () => ({ status: 200, body: await keys.setScopes(keyId, scopes, actor) }),
      );
    },
  );

  api.put(
    '/keys/:keyId/expiry',
    {
      schema: {
        operationId: 'setKeyExpiry',
        summary: "Set or remove a key's expiry",
        tags: TAGS,
        params,
        headers: IdempotencyHeaderSchema,
        body: SetExpiryBodySchema,
        response: {
          200: adminJson('The key with its new expiry.', Type.Ref(KeySchema), REPLAYED),
          ...adminErrors(KEY_CHANGE_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const { keyId } = request.params;
      const actor = actorOf(request);
      logCall(request, 'setKeyExpiry', keyId);
      const { expiresAt } = request.body;
      const at = expiresAt === 'never' ? null : instant('expiresAt', expiresAt);
      return idempotent(
        deps,
        request,
        reply,
        { operation: 'setKeyExpiry', keyId, body: request.body },
        async () => ({ status: 200, body: await keys.setExpiry(keyId, at, actor) }),
      );
    },
  );

  api.post(
    '/keys/:keyId/roll',
    {
      schema: {
        operationId: 'rollKey',
        summary: 'Give a key a new secret',
        description:
          'Same key record (id, plan, counters, ban). The new secret is in this response only; the previous one keeps working for `graceSeconds` (default 86400). Accepts `Idempotency-Key` as createKey does.',
        tags: TAGS,
        params,
        headers: IdempotencyHeaderSchema,
        body: RollBodySchema,
        response: {
          200: adminJson('The key and its new secret.', Type.Ref(NewKeySchema), REPLAYED),
          ...adminErrors([
            'invalid_body',
            'invalid_json',
            'invalid_parameter',
            'key_not_found',
            'key_revoked',
            'key_changed',
            'idempotency_key_in_use',
            'payload_too_large',
            'unsupported_media_type',
            'idempotency_key_reused',
          ]),
        },
      },
    },
    async (request, reply) => {
      const { keyId } = request.params;
      const actor = actorOf(request);
      logCall(request, 'rollKey', keyId);
      const graceMs = (request.body.graceSeconds ?? DEFAULT_GRACE_SECONDS) * 1000;
      return idempotent(
        deps,
        request,
        reply,
        { operation: 'rollKey', keyId, body: request.body },
        async () => ({ status: 200, body: await keys.roll(keyId, { graceMs }, actor) }),
      );
    },
  );

  for (const [action, operationId, summary] of [
    ['revoke', 'revokeKey', 'Revoke a key for good; every instance refuses it within 5 s'],
    ['unban', 'unbanKey', "Lift a key's ban early"],
  ] as const) {
    api.post(
      `/keys/:keyId/${action}`,
      {
        schema: {
          operationId,
          summary,
          description: 'Accepts `Idempotency-Key` as createKey does.',
          tags: TAGS,
          params,
          headers: IdempotencyHeaderSchema,
          response: {
            200: adminJson('The key as it is now.', Type.Ref(KeySchema), REPLAYED),
            ...adminErrors([
              'invalid_parameter',
              'key_not_found',
              'idempotency_key_in_use',
              'idempotency_key_reused',
            ]),
          },
        },
      },
      async (request, reply) => {
        const { keyId } = request.params;
        logCall(request, operationId, keyId);
        const actor = actorOf(request);
        return idempotent(deps, request, reply, { operation: operationId, keyId }, async () => ({
          status: 200,
          body: await (action === 'revoke' ? keys.revoke(keyId, actor) : keys.unban(keyId, actor)),
        }));
      },
    );
  }

  api.get(
    '/keys/:keyId/usage',
    {
      schema: {
        operationId: 'getKeyUsage',
        summary: "A key's requests per UTC day",
        tags: TAGS,
        params,
        querystring: UsageQuerySchema,
        response: {
          200: adminJson(
            'Admitted and refused requests per day, the last `days` days.',
            Type.Ref(UsageSchema),
          ),
          ...adminErrors(['invalid_parameter', 'key_not_found']),
        },
      },
    },
    async (request) => {
      const { keyId } = request.params;
      logCall(request, 'getKeyUsage', keyId);
      return keys.usage(keyId, request.query.days ?? 30);
    },
  );

  api.get(
    '/audit',
    {
      schema: {
        operationId: 'listAudit',
        summary: 'The audit trail of key changes',
        description:
          'Every change to a key, oldest first (newest first with `order=desc`): when, what (old and new values), who. Never a secret.',
        tags: ['Audit'],
        querystring: AuditQuerySchema,
        response: {
          200: adminJson('Audit entries.', Type.Ref(AuditSchema)),
          ...adminErrors(['invalid_parameter']),
        },
      },
    },
    async (request) => {
      const { keyId, since, limit, order } = request.query;
      logCall(request, 'listAudit', keyId);
      const sinceMs = since === undefined ? undefined : parseRfc3339(since);
      if (since !== undefined && sinceMs === undefined) {
        throw httpErrors.invalidParameter(`since must be ${RFC3339_HINT}`);
      }
      return keys.audit({
        ...(keyId === undefined ? {} : { keyId }),
        ...(sinceMs === undefined ? {} : { since: sinceMs }),
        ...(limit === undefined ? {} : { limit }),
        ...(order === undefined ? {} : { order }),
      });
    },
  );
}

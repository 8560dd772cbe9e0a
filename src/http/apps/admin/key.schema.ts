import { Type } from '@sinclair/typebox';
import { AUDIT_ACTIONS } from '../../../domain/api-keys/key-audit.js';
import { KEY_LIST_LIMIT, KEY_SORTS, KEY_STATES } from '../../../domain/api-keys/key-listing.js';
import { SCOPES } from '../../../domain/api-keys/scopes.js';
import { MAX_CUSTOM_LIMIT, type Plan, PLANS } from '../../../domain/rate-limits/plans.js';

/**
 * The one description of the admin API's resources: request validation
 * (src/http/validation/validator-compiler.ts), the handlers' types (TypeBox type provider) and the admin
 * OpenAPI document all read these schemas. A key is the domain's KeyView, as `keys list --json`.
 */

/** RFC 3339 with a zone, e.g. 2027-01-31T00:00:00Z or 2027-01-31T09:00:00+09:00. */
export const RFC3339 =
  '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?(Z|[+-]\\d{2}:\\d{2})$';
const KEY_ID = '^key_[0-9A-Za-z]{16}$';
/** The words of a refusal (the validator's x-message), so that a person reads what to send. */
const TIME_MESSAGE = 'must be an RFC 3339 time with its offset, like 2027-01-31T12:00:00Z';
const KEY_ID_MESSAGE = 'must be a key id: key_ and 16 letters and digits';
/** The longest rotation grace: 30 days. */
export const MAX_GRACE_SECONDS = 30 * 86_400;
export const USAGE_DAYS = { min: 1, max: 366, default: 30 } as const;
export const AUDIT_LIMIT = { min: 1, max: 1_000, default: 100 } as const;

const EXAMPLE_KEY = {
  id: 'key_8Fq2LkA0pQe7ZcX1',
  name: 'acme-prod',
  plan: 'pro',
  limits: { perMinute: 300, perDay: 10_000 },
  scopes: ['pets:read', 'pets:write'],
  prefix: 'pa_live_4kP2',
  state: 'active',
  createdAt: '2026-11-24T10:00:00.000Z',
  lastUsedAt: null,
  expiresAt: null,
  revokedAt: null,
  bannedUntil: null,
  previousSecretExpiresAt: null,
  deprecatedCalls: 0,
} as const;

/** What a key may do, as a key shows it: pets:read (listPets, getPet), pets:write (createPet). */
const scopes = (description: string) =>
  Type.Array(Type.Union(SCOPES.map((scope) => Type.Literal(scope))), { description });

/**
 * Scopes as a change gives them: a comma list, as `keys set-scopes` takes it (the request
 * validator reads no arrays). The domain checks it: at least one known scope, a repeat counts once.
 */
const scopesGiven = (description: string) =>
  Type.String({ minLength: 1, maxLength: 100, description, examples: ['pets:read,pets:write'] });

const time = (description: string) =>
  Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description });

export const KeySchema = Type.Object(
  {
    id: Type.String({ description: 'The key id, e.g. key_ and 16 letters and digits.' }),
    name: Type.String({ description: 'The label given at creation.' }),
    plan: Type.Union(
      PLANS.map((plan) => Type.Literal(plan)),
      { description: 'The plan; enterprise limits are agreed per key.' },
    ),
    limits: Type.Object(
      { perMinute: Type.Integer(), perDay: Type.Integer() },
      { additionalProperties: false, description: 'The limits in force.' },
    ),
    scopes: scopes(
      'What the key may do: pets:read (listPets, getPet), pets:write (createPet). Any other operation gets 403 insufficient_scope.',
    ),
    prefix: Type.String({
      description: 'The first 12 characters of the secret; never the secret.',
    }),
    state: Type.Union(
      ['active', 'revoked', 'expired', 'banned'].map((s) => Type.Literal(s)),
      { description: 'What a request with the key gets now.' },
    ),
    createdAt: Type.String({ format: 'date-time' }),
    lastUsedAt: time('Coarse: updated at most once a minute.'),
    expiresAt: time('From then on the key is refused with 401 api_key_expired.'),
    revokedAt: time('When the key was revoked.'),
    bannedUntil: time('End of the ban in force.'),
    previousSecretExpiresAt: time('After a roll: when the previous secret stops working.'),
    deprecatedCalls: Type.Integer({ description: 'Calls to deprecated operations so far.' }),
  },
  {
    $id: 'Key',
    additionalProperties: false,
    description: 'An API key as operators see it; never its secret.',
    examples: [EXAMPLE_KEY],
  },
);

export const KeysSchema = Type.Array(Type.Ref(KeySchema), { $id: 'Keys' });

export const NewKeySchema = Type.Object(
  {
    key: Type.Ref(KeySchema),
    secret: Type.String({
      description: 'The secret: shown in this response only, never again.',
      pattern: '^pa_(live|test)_[0-9A-Za-z]{36}$',
    }),
  },
  {
    $id: 'NewKey',
    additionalProperties: false,
    description: 'A key with its secret, after a create or a roll.',
  },
);

export const UsageSchema = Type.Array(
  Type.Object(
    {
      day: Type.String({ description: 'YYYY-MM-DD, UTC.', pattern: '^\\d{4}-\\d{2}-\\d{2}$' }),
      admitted: Type.Integer(),
      refused: Type.Integer(),
    },
    { additionalProperties: false },
  ),
  { $id: 'Usage', description: 'Requests per UTC day, admitted and refused.' },
);

const ACTOR = Type.Union([
  Type.Object(
    { kind: Type.Literal('cli'), user: Type.String(), host: Type.String() },
    { additionalProperties: false },
  ),
  Type.Object(
    { kind: Type.Literal('admin_token'), id: Type.String() },
    { additionalProperties: false },
  ),
  Type.Object({ kind: Type.Literal('system') }, { additionalProperties: false }),
]);

export const AuditSchema = Type.Array(
  Type.Object(
    {
      id: Type.String(),
      at: Type.String({ format: 'date-time' }),
      keyId: Type.String(),
      action: Type.Union(AUDIT_ACTIONS.map((a) => Type.Literal(a))),
      changes: Type.Record(
        Type.String(),
        Type.Object({ from: Type.Unknown(), to: Type.Unknown() }, { additionalProperties: false }),
      ),
      actor: ACTOR,
    },
    { additionalProperties: false },
  ),
  { $id: 'Audit', description: 'Changes to keys, oldest first; never a secret.' },
);

const plan = Type.Unsafe<Plan>({
  type: 'string',
  enum: [...PLANS],
  description: 'free, pro, business, or enterprise (with perMinute and perDay).',
});
const limit = (what: string) =>
  Type.Integer({
    minimum: 1,
    maximum: MAX_CUSTOM_LIMIT,
    description: `Enterprise only, and then required: requests per ${what}.`,
  });

export const CreateKeyBodySchema = Type.Object(
  {
    plan,
    perMinute: Type.Optional(limit('minute')),
    perDay: Type.Optional(limit('day')),
    name: Type.Optional(Type.String({ maxLength: 100, description: 'A label for people.' })),
    expiresAt: Type.Optional(
      Type.String({
        pattern: RFC3339,
        'x-message': TIME_MESSAGE,
        description: 'RFC 3339; the key stops working then.',
      }),
    ),
    scopes: Type.Optional(
      scopesGiven(
        'What the key may do, a comma list: `pets:read`, `pets:write`; both when absent.',
      ),
    ),
  },
  { additionalProperties: false, examples: [{ plan: 'pro', name: 'acme-prod' }] },
);

export const SetPlanBodySchema = Type.Object(
  { plan, perMinute: Type.Optional(limit('minute')), perDay: Type.Optional(limit('day')) },
  {
    additionalProperties: false,
    examples: [{ plan: 'enterprise', perMinute: 5000, perDay: 1000000 }],
  },
);

export const SetExpiryBodySchema = Type.Object(
  {
    expiresAt: Type.String({
      pattern: `${RFC3339}|^never$`,
      'x-message': `${TIME_MESSAGE}, or never`,
      description: 'RFC 3339, or `never` to remove the expiry.',
    }),
  },
  { additionalProperties: false, examples: [{ expiresAt: '2027-01-31T00:00:00Z' }] },
);

export const SetScopesBodySchema = Type.Object(
  {
    scopes: scopesGiven(
      'What the key may do from now on, a comma list: `pets:read`, `pets:write`.',
    ),
  },
  { additionalProperties: false, examples: [{ scopes: 'pets:read' }] },
);

export const RollBodySchema = Type.Object(
  {
    graceSeconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_GRACE_SECONDS,
        description: 'How long the previous secret keeps working; default 86400 (24 h), 0 at once.',
      }),
    ),
  },
  { additionalProperties: false, examples: [{ graceSeconds: 3600 }] },
);

export const KeyParamsSchema = Type.Object(
  {
    keyId: Type.String({
      pattern: KEY_ID,
      'x-message': KEY_ID_MESSAGE,
      description: 'The key id, key_...',
    }),
  },
  { additionalProperties: false },
);

export const UsageQuerySchema = Type.Object(
  {
    days: Type.Optional(
      Type.Integer({
        minimum: USAGE_DAYS.min,
        maximum: USAGE_DAYS.max,
        default: USAGE_DAYS.default,
      }),
    ),
  },
  { additionalProperties: false },
);

/** A string out of a fixed list, in the form the request validator enforces (`enum`). */
const oneOf = <T extends string>(values: readonly T[], options: Record<string, unknown>) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], ...options });

const order = Type.Optional(
  oneOf(['asc', 'desc'] as const, {
    default: 'asc',
    description: '`asc` (the default) or `desc`.',
  }),
);

export const KeysQuerySchema = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({
        minimum: KEY_LIST_LIMIT.min,
        maximum: KEY_LIST_LIMIT.max,
        default: KEY_LIST_LIMIT.default,
        description: 'Keys per page.',
      }),
    ),
    cursor: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1024,
        description:
          'Opaque position from the `Link: rel="next"` header of the previous page; bound to the same filter and order.',
      }),
    ),
    state: Type.Optional(oneOf(KEY_STATES, { description: 'Only keys in this state now.' })),
    plan: Type.Optional(oneOf(PLANS, { description: 'Only keys on this plan.' })),
    label: Type.Optional(
      Type.String({
        maxLength: 100,
        description: 'Only keys whose label contains this text (letters in any case).',
      }),
    ),
    sort: Type.Optional(
      oneOf(KEY_SORTS, {
        default: 'created',
        description:
          '`created` (the default), `label` or `lastUsed` (never used counts as oldest).',
      }),
    ),
    order,
  },
  { additionalProperties: false },
);

export const AuditQuerySchema = Type.Object(
  {
    keyId: Type.Optional(Type.String({ pattern: KEY_ID, 'x-message': KEY_ID_MESSAGE })),
    since: Type.Optional(
      Type.String({ pattern: RFC3339, 'x-message': TIME_MESSAGE, description: 'RFC 3339.' }),
    ),
    limit: Type.Optional(
      Type.Integer({
        minimum: AUDIT_LIMIT.min,
        maximum: AUDIT_LIMIT.max,
        default: AUDIT_LIMIT.default,
      }),
    ),
    order: Type.Optional(
      oneOf(['asc', 'desc'] as const, {
        default: 'asc',
        description: '`asc` (the default): oldest first; `desc`: newest first.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const IdempotencyHeaderSchema = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      description: 'Retry safely: the same key and body within 24 hours return the first response.',
    }),
  ),
});

/** Referenced by $id from the routes; added to the admin app once. */
export const ADMIN_SCHEMAS = [KeySchema, KeysSchema, NewKeySchema, UsageSchema, AuditSchema];

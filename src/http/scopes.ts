/**
 * The scopes the service answers, each named once: where it lives and who may call it. The rest of
 * the HTTP layer takes paths from here, so a new scope (an admin interface, a separate metrics
 * listener) is one entry here and its registration in build-app.ts.
 */

/** A path prefix and the requests under it: the prefix alone, or followed by `/` or `?`. */
export interface PrefixScope {
  readonly prefix: string;
}

/**
 * The public API: every request under its prefix, known path or not, is admitted by API key
 * (src/domain/admission) before anything else happens to it; its own description is open to
 * anyone on the address budget.
 */
const API_PREFIX = '/v1';
export const API_SCOPE = {
  prefix: API_PREFIX,
  /** The OpenAPI document of the API, served without a key. */
  documentPath: `${API_PREFIX}/openapi.json`,
} as const;

/**
 * The admin API: served only by its own listener (ADMIN_PORT), which serves nothing else but the
 * console that calls it (CONSOLE_SCOPE); every
 * request under it is admitted by admin token (src/domain/admin-tokens), its description by the
 * address budget. The pet listener has no route here, so it answers 404 as for any unknown path.
 */
const ADMIN_PREFIX = '/admin/v1';
export const ADMIN_SCOPE = {
  prefix: ADMIN_PREFIX,
  documentPath: `${ADMIN_PREFIX}/openapi.json`,
} as const;

/**
 * The operator console: its page and assets, served by the admin listener beside the admin API it
 * calls (src/http/apps/admin/console.route.ts); the page is `${prefix}/`.
 */
export const CONSOLE_SCOPE = { prefix: '/admin' } as const;

/** The operations endpoints: unauthenticated, outside the API, never counted against a budget. */
export const OPERATIONS_ENDPOINTS = {
  health: '/healthz',
  ready: '/readyz',
  metrics: '/metrics',
  /** The interactive reference page and its assets (off with DOCS=off). */
  docs: '/docs',
  /** The build ({version, commit, node}): on the operations listener only. */
  version: '/version',
} as const;

/**
 * The operations listener (OPS_PORT): /healthz, /readyz, /metrics and /version, nothing else.
 * When it is on, the public listener no longer serves /metrics (404, as for any unknown path).
 */
export const OPS_PATHS: readonly string[] = [
  OPERATIONS_ENDPOINTS.health,
  OPERATIONS_ENDPOINTS.ready,
  OPERATIONS_ENDPOINTS.metrics,
  OPERATIONS_ENDPOINTS.version,
];

/** Whether a request URL (path and query) falls under the scope's prefix. */
export function isUnder(scope: PrefixScope, url: string): boolean {
  const { prefix } = scope;
  if (!url.startsWith(prefix)) return false;
  const next = url.charAt(prefix.length);
  return next === '' || next === '/' || next === '?';
}

/** An API path as clients call it (Location, Link, messages): the prefix, then `path`. */
export function apiPath(path: string): string {
  return `${API_SCOPE.prefix}${path}`;
}

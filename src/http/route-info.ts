import type { FastifyRequest } from 'fastify';

/** What the hooks of every request need to know of the route that answers it. */
export interface RouteInfo {
  /** The metrics label: the operationId, else the route's path pattern, else `unmatched`. */
  readonly operation: string;
  /**
   * The matched route as OpenTelemetry's http.route and the OpenAPI document write it
   * (`/v1/pets/{petId}`, from Fastify's `/v1/pets/:petId`); undefined when no route matched, so a
   * raw path, which may hold anything a client sent, is never taken for one.
   */
  readonly template: string | undefined;
  readonly deprecated: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by routeInfo; read it through routeInfo. */
    routeInfo: RouteInfo | undefined;
  }
}

/** Fastify's `/v1/pets/:petId` as OpenTelemetry and OpenAPI write it: `/v1/pets/{petId}`. */
export function routeTemplateOf(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

const UNMATCHED: RouteInfo = { operation: 'unmatched', template: undefined, deprecated: false };

/** By the route's config object, which Fastify makes once per route. */
const byRoute = new WeakMap<object, RouteInfo>();

/**
 * The route's info, worked out once per route and kept on the request: Fastify's routeOptions
 * builds a new object at each read, and four hooks of every request asked it.
 */
export function routeInfo(request: FastifyRequest): RouteInfo {
  if (request.routeInfo !== undefined) return request.routeInfo;
  const options = request.routeOptions;
  const config = options.config as object | undefined;
  let info = config === undefined ? undefined : byRoute.get(config);
  if (info === undefined) {
    const url = options.url;
    const schema = options.schema as { operationId?: unknown; deprecated?: unknown } | undefined;
    info =
      url === undefined
        ? UNMATCHED
        : {
            operation: typeof schema?.operationId === 'string' ? schema.operationId : url,
            template: routeTemplateOf(url),
            deprecated: schema?.deprecated === true,
          };
    if (config !== undefined) byRoute.set(config, info);
  }
  request.routeInfo = info;
  return info;
}

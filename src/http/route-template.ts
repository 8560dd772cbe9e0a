import type { FastifyRequest } from 'fastify';

const templates = new Map<string, string>();

/**
 * The matched route as OpenTelemetry's http.route and the OpenAPI document write it
 * (`/v1/pets/{petId}`, from Fastify's `/v1/pets/:petId`); undefined when no route matched, so a
 * raw path, which may hold anything a client sent, is never taken for one.
 */
export function routeTemplate(request: FastifyRequest): string | undefined {
  const url = request.routeOptions.url;
  if (url === undefined) return undefined;
  let template = templates.get(url);
  if (template === undefined) {
    template = url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    templates.set(url, template);
  }
  return template;
}

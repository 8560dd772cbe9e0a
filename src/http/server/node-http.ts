/**
 * Node's http module as CommonJS has it, which is how Fastify loads it. An ESM `import` of a
 * builtin builds an ESM facade that reads every export, and node:http's lazy `WebSocket` and
 * `EventSource` exports then load Node's bundled undici at every start, for classes the service
 * never uses. Import from here, not from
 * node:http (type-only imports are fine: they leave no import behind).
 */
export const http = process.getBuiltinModule('node:http');

/**
 * Node's http module as CommonJS has it, which is how Fastify loads it. An ESM `import` of a
 * builtin builds an ESM facade that reads every export, and node:http's lazy `WebSocket` and
 * `EventSource` exports then load Node's bundled undici: 44 ms of CPU at every start (about 4% of
 * it, 72 starts in `npm test`) for classes the service never uses. Import from here, not from
 * node:http (type-only imports are fine: they leave no import behind).
 */
export const http = process.getBuiltinModule('node:http');

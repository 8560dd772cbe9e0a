// Usage: node scripts/bundle.mjs [--watch]      (part of `npm run build`; `npm run dev` watches)
//
// Joins what tsc wrote to dist/ into one file per process, in dist/bundle/:
//   server.js                the server (dist/main.js imports it)
//   cli.js                   the CLI (dist/cli/main.js imports it)
//   sqlite-commit-worker.js  the SQLite commit worker thread (sqlite-writer.ts starts it by URL,
//                            beside the module that starts it)
// Node spends a third of a start loading the 1,600 modules the server is made of one by one
// (resolving, reading, linking each); one file of them starts in 0.37 s of CPU instead of 0.57.
// Left outside, loaded from node_modules as before: the native SQLite addon, packages that read
// files beside their own code (swagger-ui's page assets), what only some starts load (pino-pretty
// at a terminal; the OpenTelemetry SDK when tracing is on, which test/telemetry checks is not
// loaded otherwise) and optional requires of packages that are not installed (pg-native).
import { build, context } from 'esbuild';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const outdir = 'dist/bundle';

/** @type {import('esbuild').BuildOptions} */
const options = {
  absWorkingDir: root,
  entryPoints: {
    server: 'dist/server-main.js',
    cli: 'dist/cli/cli-main.js',
    'sqlite-commit-worker': 'dist/storage/sqlite/sqlite-commit-worker.js',
  },
  outdir,
  bundle: true,
  platform: 'node',
  format: 'esm',
  // What a process imports only sometimes (PostgreSQL, Redis, tracing, CORS) is a file of its own,
  // loaded when imported: an external package imported by a module inlined into the entry file
  // would be loaded at every start, whether that module ever runs or not.
  splitting: true,
  // Beside the entries: a module's import.meta.url then names dist/bundle/ wherever esbuild put it
  // (sqlite-writer starts the worker by a URL relative to its own).
  chunkNames: '[name]-[hash]',
  target: 'node24',
  external: [
    'better-sqlite3',
    'pino-pretty',
    '@fastify/swagger-ui',
    'pg-native',
    // The SDK; the API (a no-op until an SDK registers) is in, since prom-client always loads it.
    ...[
      'context-async-hooks',
      'core',
      'exporter-trace-otlp-http',
      'exporter-trace-otlp-proto',
      'resources',
      'sdk-trace',
      'semantic-conventions',
    ].map((name) => `@opentelemetry/${name}`),
  ],
  // CommonJS packages inside an ES module still ask for these.
  banner: {
    js: [
      "import { createRequire as __petstoreRequire } from 'node:module';",
      "import { fileURLToPath as __petstorePath } from 'node:url';",
      'const require = __petstoreRequire(import.meta.url);',
      'const __filename = __petstorePath(import.meta.url);',
      "const __dirname = __petstorePath(new URL('.', import.meta.url));",
    ].join('\n'),
  },
  // Stack traces map back to the TypeScript sources with node --enable-source-maps.
  sourcemap: true,
  logLevel: 'warning',
};

if (process.argv.includes('--watch')) {
  // Rebuilt whenever tsc --watch rewrites a file of dist/ (npm run dev).
  const watching = await context({ ...options, logLevel: 'info' });
  await watching.watch();
} else {
  // Chunks are named by their content's hash: without this, every build would leave the previous
  // build's chunks beside the new ones.
  rmSync(join(root, outdir), { recursive: true, force: true });
  await build(options);
}

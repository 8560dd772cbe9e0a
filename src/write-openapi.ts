/**
 * A build step (the last of `npm run build`): writes the OpenAPI document this build serves to
 * dist/openapi.json, for `petstore check`. The CLI may not import http/ (eslint.config.js), and a
 * file written once at build time keeps it that way: the check reads the document as data, and the
 * layering rule needs no exception. The app is built as the server builds it, on an in-memory
 * SQLite database, and the document is the same as a server's but for `servers` (left out).
 */
import { writeFileSync } from 'node:fs';
import { GENERATED_OPENAPI_FILE } from './build-info.js';
import { loadConfig } from './config/config.js';
import { buildApp } from './http/apps/public/public-app.js';
import { createServices } from './services.js';

const services = await createServices(loadConfig({ DATABASE_URL: 'sqlite::memory:' }), {
  migrate: true,
});
try {
  const app = await buildApp({ services });
  await app.ready();
  const document: Record<string, unknown> = { ...app.swagger() };
  delete document.servers;
  writeFileSync(GENERATED_OPENAPI_FILE, `${JSON.stringify(document, null, 2)}\n`);
  await app.close();
} finally {
  await services.close();
}

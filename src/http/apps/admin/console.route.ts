import { existsSync, readdirSync, readFileSync } from 'node:fs';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AdminGuard } from './admin-token-guard.js';
import { CONSOLE_CONTENT_SECURITY_POLICY } from '../../answers/response-headers.js';
import { noRouteFor } from '../../not-found.js';
import { CONSOLE_SCOPE } from '../../scopes.js';

/** One asset of the console, as the build wrote it: raw, and precompressed where that is smaller. */
interface ConsoleFile {
  type: string;
  raw: Buffer;
  br?: Buffer;
  gzip?: Buffer;
  /** Names with a content hash never change: a browser may keep them for a year. */
  immutable: boolean;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/**
 * Where `npm run build` writes the console (console/build.mjs): dist/console beside this module's
 * compiled copy, or, for the sources run by the tests, the dist/ of the checkout.
 */
function consoleFolder(): URL | undefined {
  for (const relative of ['../../../console/', '../../../../dist/console/']) {
    const folder = new URL(relative, import.meta.url);
    if (existsSync(new URL('index.html', folder))) return folder;
  }
  return undefined;
}

/** Reads the built console once: a handful of small files, answered from memory. */
export function loadConsoleFiles(folder = consoleFolder()): Map<string, ConsoleFile> | undefined {
  if (folder === undefined) return undefined;
  const files = new Map<string, ConsoleFile>();
  const names = readdirSync(folder);
  for (const name of names) {
    const type = TYPES[name.slice(name.lastIndexOf('.'))];
    if (type === undefined) continue;
    const read = (suffix: string) =>
      names.includes(name + suffix) ? readFileSync(new URL(name + suffix, folder)) : undefined;
    const br = read('.br');
    const gzip = read('.gz');
    files.set(name, {
      type,
      raw: readFileSync(new URL(name, folder)),
      ...(br ? { br } : {}),
      ...(gzip ? { gzip } : {}),
      immutable: /-[A-Z0-9]{8}\.(js|css)$/.test(name),
    });
  }
  return files;
}

/** The encoding to answer with: brotli, then gzip, when the client accepts it and the build has it. */
function encodingFor(request: FastifyRequest, file: ConsoleFile): 'br' | 'gzip' | undefined {
  const accepted = String(request.headers['accept-encoding'] ?? '')
    .split(',')
    .map((part) => part.trim().split(';'))
    .filter(([, q]) => q === undefined || !/^q=0(\.0*)?$/.test(q.trim()))
    .map(([name]) => name?.trim().toLowerCase());
  if (file.br !== undefined && accepted.includes('br')) return 'br';
  if (file.gzip !== undefined && accepted.includes('gzip')) return 'gzip';
  return undefined;
}

/**
 * The operator console at /admin/: a static page and its assets, under a policy of its own (no
 * inline script or style, no eval, its own origin only). It holds no data: everything it shows it
 * reads from the admin API with the token the operator signs in with, so the page itself is open
 * to the address budget as the admin API's document is.
 */
export function registerConsole(
  app: FastifyInstance,
  options: { files: Map<string, ConsoleFile> | undefined; onRequest: AdminGuard },
): void {
  const { files, onRequest } = options;
  const root = `${CONSOLE_SCOPE.prefix}/`;
  // `:file?` serves /admin and /admin/ too: the page names its assets by absolute path.
  app.get(`${root}:file?`, { schema: { hide: true }, onRequest }, async (request, reply) => {
    const { file: name } = request.params as { file?: string };
    const file = files?.get(name === undefined || name === '' ? 'index.html' : name);
    if (file === undefined) {
      if (files === undefined) request.log.warn('the console is not built (npm run build)');
      throw noRouteFor(request);
    }
    const encoding = encodingFor(request, file);
    void reply
      .header('content-type', file.type)
      .header('content-security-policy', CONSOLE_CONTENT_SECURITY_POLICY)
      .header('referrer-policy', 'no-referrer')
      .header('x-frame-options', 'DENY')
      .header('cross-origin-opener-policy', 'same-origin')
      .header('cross-origin-resource-policy', 'same-origin')
      .header('vary', 'Accept-Encoding')
      .header('cache-control', file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
    if (encoding !== undefined) void reply.header('content-encoding', encoding);
    return reply.send(encoding === undefined ? file.raw : file[encoding]);
  });
}

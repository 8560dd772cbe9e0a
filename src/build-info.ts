import { existsSync, readFileSync } from 'node:fs';

/**
 * What this build is, for the server (/healthz reports the version) and for `petstore check`
 * (compares a deployment with it). Files are found from the package root: the nearest folder above
 * this file with a package.json, which is the same for src/ (tests), dist/ and the bench's
 * build/bench/src/.
 */
const PACKAGE_ROOT = packageRoot();

function packageRoot(): URL {
  let folder = new URL('../', import.meta.url);
  while (!existsSync(new URL('package.json', folder))) {
    const parent = new URL('../', folder);
    if (parent.href === folder.href) return new URL('../', import.meta.url);
    folder = parent;
  }
  return folder;
}

function packageVersion(): string {
  const manifest: unknown = JSON.parse(readFileSync(new URL('package.json', PACKAGE_ROOT), 'utf8'));
  const version =
    typeof manifest === 'object' && manifest !== null && 'version' in manifest
      ? manifest.version
      : undefined;
  if (typeof version !== 'string') throw new Error('package.json has no version');
  return version;
}

/** The package's version (package.json), which /healthz reports. */
export const BUILD_VERSION = packageVersion();

/** Written by `npm run build` (src/write-build-info.ts): what the build was made from. */
export const BUILD_INFO_FILE = new URL('dist/build-info.json', PACKAGE_ROOT);

/** The commit this build was made from, or `unknown` (built outside git without PETSTORE_COMMIT). */
function buildCommit(): string {
  try {
    const info: unknown = JSON.parse(readFileSync(BUILD_INFO_FILE, 'utf8'));
    const commit =
      typeof info === 'object' && info !== null && 'commit' in info ? info.commit : undefined;
    return typeof commit === 'string' && commit !== '' ? commit : 'unknown';
  } catch {
    // Not built (sources run directly): nothing says which commit they are.
    return 'unknown';
  }
}

/** The commit of the build: /healthz and /version on the ops listener, the first log line. */
export const BUILD_COMMIT = buildCommit();

/**
 * The OpenAPI document this build serves, without `servers` (they depend on the deployment's
 * address). `npm run build` writes it (src/write-openapi.ts), so that the CLI, which must not
 * build the HTTP app, can compare a deployment's document with it.
 */
export const GENERATED_OPENAPI_FILE = new URL('dist/openapi.json', PACKAGE_ROOT);

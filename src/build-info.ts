import { readFileSync } from 'node:fs';

/**
 * What this build is, for the server (/healthz reports the version) and for `petstore check`
 * (compares a deployment with it). Files are found from the package root: src/ and dist/ sit at the
 * same depth under it, so the same relative URL works from the sources (tests) and from dist/.
 */
const PACKAGE_ROOT = new URL('../', import.meta.url);

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

/**
 * The commit this build was made from: `npm run build` writes it (git rev-parse HEAD) to
 * dist/build-commit.txt; "unknown" for a build made outside a git checkout.
 */
export const BUILD_COMMIT = buildCommit();

function buildCommit(): string {
  try {
    const commit = readFileSync(new URL('dist/build-commit.txt', PACKAGE_ROOT), 'utf8').trim();
    return /^[0-9a-f]{7,64}$/.test(commit) ? commit : 'unknown';
  } catch {
    return 'unknown';
  }
}

/**
 * The OpenAPI document this build serves, without `servers` (they depend on the deployment's
 * address). `npm run build` writes it (src/write-openapi.ts), so that the CLI, which must not
 * build the HTTP app, can compare a deployment's document with it.
 */
export const GENERATED_OPENAPI_FILE = new URL('dist/openapi.json', PACKAGE_ROOT);

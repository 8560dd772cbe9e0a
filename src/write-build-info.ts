/**
 * A build step of `npm run build`: records the commit the build is made from in
 * dist/build-info.json, read at start (src/build-info.ts). The git checkout's HEAD; outside a
 * checkout (a container build from a copy of the sources) PETSTORE_COMMIT, which the build
 * script passes as the argument (only config/ reads the environment); else `unknown`.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { BUILD_INFO_FILE } from './build-info.js';

function gitHead(): string | undefined {
  try {
    const head = execFileSync('git', ['rev-parse', 'HEAD'], {
      cwd: fileURLToPath(new URL('../', import.meta.url)),
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    return /^[0-9a-f]{40}$/.test(head) ? head : undefined;
  } catch {
    return undefined;
  }
}

const given = process.argv[2]?.trim();
const commit = gitHead() ?? (given === undefined || given === '' ? 'unknown' : given);
writeFileSync(BUILD_INFO_FILE, `${JSON.stringify({ commit }, null, 2)}\n`);

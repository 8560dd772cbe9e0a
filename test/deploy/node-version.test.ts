import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const SCRIPT = join(ROOT, 'scripts', 'check-node.cjs');
const checker = createRequire(import.meta.url)(SCRIPT) as {
  check(version: string): string | null;
  REQUIRED_MAJOR: number;
  RECOMMENDED: string;
};
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  engines: { node: string };
  scripts: Record<string, string>;
};

/** Runs the script as npm's preinstall does, as the main module, with process.version faked. */
function runAs(version: string | undefined) {
  const args =
    version === undefined
      ? [SCRIPT]
      : [
          '-e',
          `Object.defineProperty(process, 'version', { value: ${JSON.stringify(version)} });` +
            `require('node:module').runMain(${JSON.stringify(SCRIPT)});`,
        ];
  return spawnSync(process.execPath, args, { encoding: 'utf8', timeout: 30_000 });
}

describe('scripts/check-node.cjs (preinstall)', () => {
  it('refuses a Node older than 24, naming the version needed and scripts/node-runtime.sh', () => {
    for (const version of ['v20.20.2', 'v22.12.0', 'v23.11.1', 'garbage']) {
      const message = checker.check(version);
      expect(message, version).toContain('Node 24 or newer');
      expect(message, version).toContain(`this is Node ${version}`);
      expect(message, version).toContain(`scripts/node-runtime.sh ${checker.RECOMMENDED}`);
    }
    for (const version of ['v24.0.0', 'v24.21.0', 'v26.10.0', process.version]) {
      expect(checker.check(version), version).toBeNull();
    }
  });

  it('exits 1 with the message under an old Node and 0 under this one', () => {
    const old = runAs('v20.20.2');
    expect(old.status).toBe(1);
    expect(old.stderr).toContain('petstore needs Node 24 or newer; this is Node v20.20.2.');
    expect(old.stderr).toContain('scripts/node-runtime.sh 24.21.0');
    const current = runAs(undefined);
    expect(current.stderr).toBe('');
    expect(current.status).toBe(0);
  });

  // The machine's own Node, when it is an old one (the Node 20), refuses for real.
  const system = spawnSync('/usr/bin/node', ['--version'], { encoding: 'utf8' });
  const systemMajor = Number(/^v(\d+)\./.exec(system.stdout ?? '')?.[1]);
  it.skipIf(!(systemMajor < checker.REQUIRED_MAJOR))(
    "refuses under the machine's own old Node",
    () => {
      const run = spawnSync('/usr/bin/node', [SCRIPT], { encoding: 'utf8', timeout: 30_000 });
      expect(run.status).toBe(1);
      expect(run.stderr).toContain(`this is Node ${system.stdout.trim()}`);
    },
  );

  it('runs as the preinstall step, and agrees with engines, .npmrc and the CI versions', () => {
    expect(manifest.scripts.preinstall).toBe('node scripts/check-node.cjs');
    expect(manifest.engines.node).toBe(`>=${checker.REQUIRED_MAJOR}`);
    // npm 11 runs the project's preinstall after the dependencies: engine-strict stops it first.
    expect(readFileSync(join(ROOT, '.npmrc'), 'utf8')).toMatch(/^engine-strict=true$/m);
    const ci = readFileSync(join(ROOT, '.ci', 'run'), 'utf8');
    const versions = /CI_NODE_VERSIONS:-([0-9. ]+)\}/.exec(ci)?.[1]?.split(' ');
    expect(versions?.[0]).toBe(checker.RECOMMENDED);
  });
});

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUILD_VERSION } from '../../src/build-info.js';
import { runCli } from '../../src/cli/run-cli.js';
import { createMetrics } from '../../src/telemetry/metrics.js';

const ROOT = join(import.meta.dirname, '..', '..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const manifest = JSON.parse(read('package.json')) as { version: string };
const lock = JSON.parse(read('package-lock.json')) as {
  version: string;
  packages: Record<string, { version?: string }>;
};
const releases = read('docs/releases.md');

function compare(a: string, b: string): number {
  const [x, y] = [a, b].map((v) => v.split('.').map(Number));
  for (let i = 0; i < 3; i++) {
    const d = (x?.[i] ?? 0) - (y?.[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

describe('one version', () => {
  it('is the same in package.json and both places of package-lock.json', () => {
    expect(manifest.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(lock.version).toBe(manifest.version);
    expect(lock.packages['']?.version).toBe(manifest.version);
  });

  it("has its entry in docs/releases.md, newer than or equal to every deployed release's", () => {
    const heading = new RegExp(`^## ${manifest.version.replaceAll('.', '\\.')}( |$)`, 'm');
    const row = new RegExp(`^\\| ${manifest.version.replaceAll('.', '\\.')} +\\|`, 'm');
    expect(heading.test(releases) || row.test(releases)).toBe(true);
    const deployed = [...releases.matchAll(/^\|\s*(\d+\.\d+\.\d+)\s*\|\s*[0-9a-f]{40}\s*\|/gm)].map(
      (m) => m[1] ?? '',
    );
    expect(deployed.length).toBeGreaterThan(0);
    for (const version of deployed) {
      expect(compare(manifest.version, version), version).toBeGreaterThanOrEqual(0);
    }
  });

  it('is what the build, petstore --version and petstore_build_info report', async () => {
    expect(BUILD_VERSION).toBe(manifest.version);
    let out = '';
    const code = await runCli(['--version'], {
      stdout: { write: (text: string) => (out += text) },
      stderr: { write: () => undefined },
    });
    expect({ code, out }).toEqual({ code: 0, out: `${manifest.version}\n` });
    const metrics = await createMetrics().registry.metrics();
    expect(metrics).toMatch(
      new RegExp(
        `^petstore_build_info\\{version="${manifest.version.replaceAll('.', '\\.')}",`,
        'm',
      ),
    );
  });
});

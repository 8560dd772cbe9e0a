import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/server-process.js';
import { adminCall, type AdminTestServer, startAdminServer } from '../http/admin/admin-server.js';
import { testRunEnv } from '../helpers/test-run.js';

const SPECTRAL = join(REPO_ROOT, 'node_modules/.bin/spectral');
const RULESET = join(REPO_ROOT, '.spectral.yaml');

interface SpectralResult {
  code: string | number;
  message: string;
  path: (string | number)[];
  severity: number;
}

/** Spectral with the repository's ruleset, as test/contract/spectral.test.ts runs it. */
async function lint(file: string): Promise<SpectralResult[]> {
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile(
      process.execPath,
      [SPECTRAL, 'lint', file, '-r', RULESET, '-f', 'json', '--fail-severity', 'error'],
      {
        cwd: REPO_ROOT,
        timeout: 30_000,
        env: { PATH: process.env.PATH ?? '', ...testRunEnv(), NO_COLOR: '1' },
      },
      (error, out, err) => {
        if (error !== null && error.code !== 1) reject(new Error(`spectral failed: ${err}`));
        else resolve(out);
      },
    );
  });
  return JSON.parse(stdout) as SpectralResult[];
}

let server: AdminTestServer | undefined;
let dir = '';
let document: Record<string, unknown> = {};

beforeAll(async () => {
  server = await startAdminServer();
  const res = await adminCall(server, 'GET', '/admin/v1/openapi.json');
  expect(res.status).toBe(200);
  document = res.body as Record<string, unknown>;
  dir = mkdtempSync(join(tmpdir(), 'petstore-admin-spectral-'));
});

afterAll(async () => {
  await server?.close();
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

describe('Spectral (spectral:oas) on /admin/v1/openapi.json', () => {
  it('reports no error', async () => {
    const file = join(dir, 'admin-openapi.json');
    writeFileSync(file, JSON.stringify(document, null, 2));
    const errors = (await lint(file)).filter((r) => r.severity === 0);
    expect(errors.map((r) => `${r.code} at ${r.path.join('.')}: ${r.message}`)).toEqual([]);
  });

  it('does report errors, so a clean run means something (a duplicated operationId)', async () => {
    const broken = structuredClone(document) as {
      paths: Record<string, Record<string, { operationId?: string }>>;
    };
    const getKey = broken.paths['/keys/{keyId}']?.get;
    if (getKey === undefined) throw new Error('no getKey in the document');
    getKey.operationId = 'listKeys';
    const file = join(dir, 'broken.json');
    writeFileSync(file, JSON.stringify(broken, null, 2));
    const codes = (await lint(file)).filter((r) => r.severity === 0).map((r) => r.code);
    expect(codes).toContain('operation-operationId-unique');
  });
});

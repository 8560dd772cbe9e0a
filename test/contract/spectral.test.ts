import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/server-process.js';
import { call, startServer, type TestServer } from '../helpers/test-server.js';

const SPECTRAL = join(REPO_ROOT, 'node_modules/.bin/spectral');
const RULESET = join(REPO_ROOT, '.spectral.yaml');

/** Spectral's DiagnosticSeverity: 0 error, 1 warning, 2 information, 3 hint. */
const SEVERITY_NAMES = ['error', 'warning', 'information', 'hint'] as const;

interface SpectralResult {
  code: string | number;
  message: string;
  path: (string | number)[];
  severity: number;
}

function isSpectralResult(value: unknown): value is SpectralResult {
  if (typeof value !== 'object' || value === null) return false;
  const result = value as Record<string, unknown>;
  return (
    (typeof result.code === 'string' || typeof result.code === 'number') &&
    typeof result.message === 'string' &&
    Array.isArray(result.path) &&
    typeof result.severity === 'number'
  );
}

/** Runs the Spectral CLI on a file with the repository's ruleset and returns its results. */
async function lint(file: string): Promise<SpectralResult[]> {
  const { stdout, stderr, exitCode } = await new Promise<{
    stdout: string;
    stderr: string;
    exitCode: number;
  }>((resolve) => {
    execFile(
      process.execPath,
      [SPECTRAL, 'lint', file, '-r', RULESET, '-f', 'json', '--fail-severity', 'error'],
      {
        cwd: REPO_ROOT,
        timeout: 30_000,
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NO_COLOR: '1' },
      },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
        resolve({ stdout, stderr, exitCode: code });
      },
    );
  });
  // 0: nothing at the fail severity; 1: something at it. Anything else means Spectral itself failed.
  if (exitCode !== 0 && exitCode !== 1) {
    throw new Error(`spectral exited with ${exitCode}:\n${stderr}\n${stdout}`);
  }
  const parsed: unknown = JSON.parse(stdout);
  if (!Array.isArray(parsed) || !parsed.every(isSpectralResult)) {
    throw new Error(`unexpected spectral output:\n${stdout}`);
  }
  return parsed;
}

function describeResult(result: SpectralResult): string {
  const severity = SEVERITY_NAMES[result.severity] ?? String(result.severity);
  return `${severity} ${result.code} at ${result.path.join('.') || '(root)'}: ${result.message}`;
}

let server: TestServer | undefined;
let dir = '';
let document: Record<string, unknown> = {};

beforeAll(async () => {
  server = await startServer();
  const res = await call(server, 'GET', '/v1/openapi.json');
  expect(res.status).toBe(200);
  document = res.body as Record<string, unknown>;
  dir = mkdtempSync(join(tmpdir(), 'petstore-spectral-'));
});

afterAll(async () => {
  await server?.close();
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

describe('Spectral (spectral:oas) on /v1/openapi.json', () => {
  it('reports no error', async () => {
    const file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(document, null, 2));
    const results = await lint(file);
    const errors = results.filter((result) => result.severity === 0);
    const others = results.filter((result) => result.severity !== 0);
    if (others.length > 0) {
      console.log(
        `spectral: ${others.length} warning(s) or lesser results:\n` +
          others.map((result) => `  ${describeResult(result)}`).join('\n'),
      );
    }
    expect(errors.map(describeResult)).toEqual([]);
  });

  it('does report errors, so a clean run means something (a duplicated operationId)', async () => {
    const broken = structuredClone(document) as {
      paths: Record<string, Record<string, { operationId?: string }>>;
    };
    const getPet = broken.paths['/pets/{petId}']?.get;
    if (getPet === undefined) throw new Error('no getPet in the document');
    getPet.operationId = 'listPets';
    const file = join(dir, 'broken.json');
    writeFileSync(file, JSON.stringify(broken, null, 2));
    const results = await lint(file);
    expect(
      results.filter((result) => result.severity === 0).map((result) => result.code),
    ).toContain('operation-operationId-unique');
  });
});

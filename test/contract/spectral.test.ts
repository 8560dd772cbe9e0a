import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/server-process.js';
import { call, startServer, type TestServer } from '../helpers/test-server.js';
import { testRunEnv } from '../helpers/test-run.js';

const SPECTRAL = join(REPO_ROOT, 'node_modules/.bin/spectral');
const RULESET = join(REPO_ROOT, '.spectral.yaml');

/** Spectral's DiagnosticSeverity: 0 error, 1 warning, 2 information, 3 hint. */
const SEVERITY_NAMES = ['error', 'warning', 'information', 'hint'] as const;

interface SpectralResult {
  code: string | number;
  message: string;
  path: (string | number)[];
  severity: number;
  /** The file the result is about, as given on the command line (absolute here). */
  source?: string;
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

/**
 * Runs the Spectral CLI once on several files with the repository's ruleset and returns the
 * results per file: one start of Spectral (seconds of loading) for every document.
 */
async function lint(files: string[]): Promise<Map<string, SpectralResult[]>> {
  const { stdout, stderr, exitCode } = await new Promise<{
    stdout: string;
    stderr: string;
    exitCode: number;
  }>((resolve) => {
    execFile(
      process.execPath,
      [SPECTRAL, 'lint', ...files, '-r', RULESET, '-f', 'json', '--fail-severity', 'error'],
      {
        cwd: REPO_ROOT,
        timeout: 60_000,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '',
          ...testRunEnv(),
          NO_COLOR: '1',
        },
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
  const unknownSource = parsed.filter((result) => !files.includes(result.source ?? ''));
  if (unknownSource.length > 0) {
    throw new Error(`spectral results for no file it was given:\n${stdout}`);
  }
  return new Map(files.map((file) => [file, parsed.filter((result) => result.source === file)]));
}

function describeResult(result: SpectralResult): string {
  const severity = SEVERITY_NAMES[result.severity] ?? String(result.severity);
  return `${severity} ${result.code} at ${result.path.join('.') || '(root)'}: ${result.message}`;
}

let server: TestServer | undefined;
let dir = '';
/** Spectral's results for the served document and for a copy broken on purpose. */
let results = { served: [] as SpectralResult[], broken: [] as SpectralResult[] };

beforeAll(async () => {
  server = await startServer();
  const res = await call(server, 'GET', '/v1/openapi.json');
  expect(res.status).toBe(200);
  const document = res.body as Record<string, unknown>;
  dir = mkdtempSync(join(tmpdir(), 'petstore-spectral-'));

  // A duplicated operationId: an error spectral:oas must report, so a clean run means something.
  const broken = structuredClone(document) as {
    paths: Record<string, Record<string, { operationId?: string }>>;
  };
  const getPet = broken.paths['/pets/{petId}']?.get;
  if (getPet === undefined) throw new Error('no getPet in the document');
  getPet.operationId = 'listPets';

  const served = join(dir, 'openapi.json');
  const brokenFile = join(dir, 'broken.json');
  writeFileSync(served, JSON.stringify(document, null, 2));
  writeFileSync(brokenFile, JSON.stringify(broken, null, 2));
  const byFile = await lint([served, brokenFile]);
  results = { served: byFile.get(served) ?? [], broken: byFile.get(brokenFile) ?? [] };
});

afterAll(async () => {
  await server?.close();
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

describe('Spectral (spectral:oas) on /v1/openapi.json', () => {
  it('reports no error', () => {
    const errors = results.served.filter((result) => result.severity === 0);
    const others = results.served.filter((result) => result.severity !== 0);
    if (others.length > 0) {
      console.log(
        `spectral: ${others.length} warning(s) or lesser results:\n` +
          others.map((result) => `  ${describeResult(result)}`).join('\n'),
      );
    }
    expect(errors.map(describeResult)).toEqual([]);
  });

  it('does report errors, so a clean run means something (a duplicated operationId)', () => {
    expect(
      results.broken.filter((result) => result.severity === 0).map((result) => result.code),
    ).toContain('operation-operationId-unique');
  });
});

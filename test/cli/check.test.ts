import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../src/domain/api-keys/key-format.js';
import { createKey, petstore } from './cli-harness.js';
import {
  REPO_ROOT,
  spawnServer,
  tempDatabaseUrl,
  type ServerProcess,
} from '../helpers/server-process.js';
import { testRunEnv } from '../helpers/test-run.js';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The built binary, as an operator runs it after a deploy, with a shell's environment only. */
function checkBinary(
  args: string[],
  env: Record<string, string> = {},
  stdin?: string,
): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(
      'node',
      ['dist/cli/main.js', 'check', ...args],
      {
        cwd: REPO_ROOT,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '',
          ...testRunEnv(),
          ...env,
        },
        timeout: 30_000,
      },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ code, stdout, stderr });
      },
    );
    child.stdin?.end(stdin ?? '');
  });
}

/**
 * The same command run in this process: the first test runs the binary; the others check what the
 * command reports, which a process start (seconds on a busy machine) would not change.
 */
function petstoreCheck(args: string[], key?: string): Promise<Run> {
  return petstore(
    NO_DATABASE,
    ['check', ...args],
    key === undefined ? {} : { PETSTORE_API_KEY: key },
  );
}

/** The report's verdict per check name, e.g. { "no key": "PASS", createPet: "SKIP" }. */
function verdicts(stdout: string): Record<string, string> {
  const found: Record<string, string> = {};
  for (const line of stdout.split('\n')) {
    const match = /^(PASS|FAIL|SKIP) {2}([^:]+):/.exec(line);
    if (match?.[1] !== undefined && match[2] !== undefined) found[match[2]] = match[1];
  }
  return found;
}

const EVERY_CHECK = [
  'no key',
  'bad key',
  'listPets',
  'rate-limit headers',
  'createPet',
  'getPet',
  'getPet unknown id',
  'OpenAPI document',
  'version',
];

/** A database `petstore check` must never open: the in-process runs are given this one. */
const NO_DATABASE = `sqlite:${join(tmpdir(), 'petstore-check-never-opened', 'never.db')}`;

interface Fault {
  /** Changes the upstream's answer to one request before the client sees it. */
  (path: string, answer: { headers: Headers; body: string }): { headers: Headers; body: string };
}

/**
 * A deployment that is the real server but for one fault: every request is forwarded to it and
 * its answer passed back, changed by `fault`. Each failure test then breaks exactly one promise.
 */
async function faultyDeployment(upstream: string, fault: Fault): Promise<Server & { url: string }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        if (name !== 'host' && name !== 'connection' && typeof value === 'string') {
          headers.set(name, value);
        }
      }
      void fetch(`${upstream}${req.url ?? '/'}`, {
        method: req.method ?? 'GET',
        headers,
        ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
        redirect: 'manual',
      }).then(async (answer) => {
        const changed = fault(req.url ?? '/', {
          headers: new Headers(answer.headers),
          body: await answer.text(),
        });
        for (const name of ['content-length', 'transfer-encoding', 'connection', 'keep-alive']) {
          changed.headers.delete(name);
        }
        res.writeHead(answer.status, Object.fromEntries(changed.headers));
        res.end(changed.body);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(server, { url: `http://127.0.0.1:${port}` });
}

describe('PETSTORE_API_KEY=K petstore check <base-url>', () => {
  let server: ServerProcess;
  let key: string;
  const proxies: Server[] = [];
  const dirs: string[] = [];

  beforeAll(async () => {
    const databaseUrl = tempDatabaseUrl();
    ({ key } = await createKey(databaseUrl, ['--plan', 'pro']));
    server = await spawnServer({ DATABASE_URL: databaseUrl });
  });
  afterAll(async () => {
    for (const proxy of proxies) proxy.close();
    server?.child.kill('SIGTERM');
    await server?.exited;
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  async function through(fault: Fault): Promise<string> {
    const proxy = await faultyDeployment(server.url, fault);
    proxies.push(proxy);
    return proxy.url;
  }

  it('passes every check against a good deployment, exit 0, and opens no local database', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'petstore-check-'));
    dirs.push(dir);
    const local = join(dir, 'never.db');

    const run = await checkBinary([`${server.url}/v1`, '--allow-writes'], {
      DATABASE_URL: `sqlite:${local}`,
      PETSTORE_API_KEY: key,
    });

    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(verdicts(run.stdout)).toEqual(Object.fromEntries(EVERY_CHECK.map((n) => [n, 'PASS'])));
    expect(run.stdout).toMatch(/^PASS {2}createPet: 201 with pet \d+, Location: \/v1\/pets\/\d+$/m);
    expect(run.stdout).toMatch(/^PASS {2}getPet: 200 with the created pet, Deprecation: @\d+/m);
    expect(run.stdout).toContain(`All ${EVERY_CHECK.length} checks passed.`);
    expect(existsSync(local)).toBe(false);
  });

  it('takes the base address without /v1 too, and skips the create without --allow-writes', async () => {
    const run = await petstoreCheck([`${server.url}/`], key);

    expect(run.code).toBe(0);
    const found = verdicts(run.stdout);
    expect(found.createPet).toBe('SKIP');
    // The pet the first test created is listed, and read back with getPet.
    expect(found.getPet).toBe('PASS');
    expect(run.stdout).toContain('with the listed pet');
  });

  it('fails listPets, exit 1, with a key the deployment does not know', async () => {
    const run = await petstoreCheck([server.url], generateApiKey('production'));

    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      /^FAIL {2}listPets: expected 200 with a JSON array of pets; got 401 unauthorized$/m,
    );
    expect(run.stderr).toMatch(/^petstore check: \d+ of \d+ checks failed: .*listPets/);
    expect(verdicts(run.stdout)['no key']).toBe('PASS');
  });

  it('fails only the OpenAPI document when the deployment serves another document', async () => {
    const url = await through((path, answer) => {
      if (!path.startsWith('/v1/openapi.json')) return answer;
      const document = JSON.parse(answer.body) as { paths: Record<string, unknown> };
      delete document.paths['/pets/{petId}'];
      return { ...answer, body: JSON.stringify(document) };
    });

    const run = await petstoreCheck([url], key);

    expect(run.code).toBe(1);
    const failed = Object.entries(verdicts(run.stdout)).filter(([, v]) => v === 'FAIL');
    expect(failed.map(([name]) => name)).toEqual(['OpenAPI document']);
    expect(run.stdout).toContain(
      `a document differing at paths["/pets/{petId}"] (not in the deployment's)`,
    );
    expect(run.stderr).toBe('petstore check: 1 of 8 checks failed: OpenAPI document\n');
  });

  it('ignores only servers when it compares the documents', async () => {
    const url = await through((path, answer) => {
      if (!path.startsWith('/v1/openapi.json')) return answer;
      const document = JSON.parse(answer.body) as Record<string, unknown>;
      document.servers = [{ url: 'https://pets.example.com/v1', description: 'production' }];
      return { ...answer, body: JSON.stringify(document) };
    });

    const run = await petstoreCheck([url], key);

    expect(run.stdout).toContain('PASS  OpenAPI document: the same document');
    expect(run.code).toBe(0);
  });

  it('fails only the rate-limit headers when RateLimit and X-RateLimit-Reset are missing', async () => {
    const url = await through((_path, answer) => {
      answer.headers.delete('ratelimit');
      answer.headers.delete('x-ratelimit-reset');
      return answer;
    });

    const run = await petstoreCheck([url], key);

    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      /^FAIL {2}rate-limit headers: .*got missing or malformed: X-RateLimit-Reset, RateLimit /m,
    );
    expect(run.stderr).toBe('petstore check: 1 of 8 checks failed: rate-limit headers\n');
  });

  it('fails the version when /healthz reports another build', async () => {
    const url = await through((path, answer) =>
      path === '/healthz' ? { ...answer, body: '{"status":"ok","version":"0.9.0"}' } : answer,
    );

    const run = await petstoreCheck([`${url}/v1`], key);

    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      /^FAIL {2}version: .*got info.version "1.0.0", \/healthz 200 version "0.9.0"$/m,
    );
    expect(run.stderr).toBe('petstore check: 1 of 8 checks failed: version\n');
  });

  it('reads the key from standard input with --key -, and never from the command line', async () => {
    const run = await checkBinary([server.url, '--key', '-'], {}, `${key}\n`);

    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(verdicts(run.stdout).listPets).toBe('PASS');
  });

  it('still takes --key K, warning that the command line shows it', async () => {
    const run = await petstore(NO_DATABASE, ['check', server.url, '--key', key]);

    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(
      /^petstore check: warning: --key K shows the key .*PETSTORE_API_KEY/,
    );
    expect(run.stderr).not.toContain(key);
  });

  it.each([
    [[], "the deployment's <base-url> is required"],
    [['http://127.0.0.1:1'], 'set PETSTORE_API_KEY, or pipe it to --key -'],
    [['http://127.0.0.1:1', '--key', '-'], 'the key must be an API key'],
    [['ftp://example.com', '--key', 'pa_live_x'], '<base-url> must be an http or https URL'],
    [['http://127.0.0.1:1', '--key', 'secret'], 'the key must be an API key'],
    [['http://127.0.0.1:1', '--kee', 'x'], 'unknown option --kee'],
  ])('exits 2 without sending anything when called as %j', async (args, message) => {
    const run = await petstoreCheck(args);

    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(message);
  });
});

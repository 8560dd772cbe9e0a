import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../src/domain/api-keys/key-format.js';
import { createKey, petstore } from '../cli/cli-harness.js';
import { rawRequest } from '../helpers/raw-http.js';
import { createTestSchema, postgresFor } from '../helpers/postgres.js';
import {
  freePort,
  REPO_ROOT,
  spawnServer,
  tempDatabaseUrl,
  type ServerProcess,
} from '../helpers/server-process.js';
import { minuteWithRoom } from '../helpers/minute.js';
import { testRunEnv } from '../helpers/test-run.js';

/**
 * Keys are issued, then handed to a server process every way a client might (well, misplaced or
 * malformed), and every line the process writes at debug level and every database file are
 * searched for every key and its secret part.
 */

const running: ServerProcess[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const server of running.splice(0)) {
    if (server.child.exitCode === null) server.child.kill('SIGKILL');
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const FIRST_KEY_BANNER = 'First API key (free plan), shown once, here only:';

/** The strings that must never be written: the key, what follows pa_live_, and what follows the
 * 12 characters `keys list` shows (the display prefix, stored by design). */
function secretsOf(key: string): string[] {
  return [key, key.slice('pa_live_'.length), key.slice(12)];
}

function flipLast(key: string): string {
  return key.slice(0, -1) + (key.at(-1) === 'a' ? 'b' : 'a');
}

let nextAddress = 0;
/**
 * Requests without a valid key draw on a budget of 30 a minute per address: each request comes
 * from its own loopback address, so every one reaches the code that handles it.
 */
function freshAddress(): string {
  nextAddress += 1;
  return `127.0.${Math.floor(nextAddress / 250)}.${2 + (nextAddress % 250)}`;
}

interface Sent {
  what: string;
  status: number;
}

/** One request written byte for byte (so headers can be repeated or odd), answered on its own. */
async function send(
  url: string,
  what: string,
  request: { method?: string; path: string; headers?: Array<[string, string]>; body?: string },
): Promise<Sent> {
  const { method = 'GET', path, headers = [], body } = request;
  const lines = [
    `${method} ${path} HTTP/1.1`,
    'Host: 127.0.0.1',
    ...headers.map(([name, value]) => `${name}: ${value}`),
    ...(body === undefined ? [] : [`Content-Length: ${Buffer.byteLength(body)}`]),
    'Connection: close',
  ];
  const res = await rawRequest(url, `${lines.join('\r\n')}\r\n\r\n${body ?? ''}`, {
    localAddress: freshAddress(),
  });
  return { what, status: res.status };
}

/** Every way a client might hand over a key, good or misplaced, with the status it gets. */
async function traffic(url: string, key: string, other: string): Promise<Sent[]> {
  const bearer: [string, string] = ['Authorization', `Bearer ${key}`];
  const json: [string, string] = ['Content-Type', 'application/json'];
  const pet = '{"name":"Secretless","categoryId":1}';
  const created = await send(url, 'create', {
    method: 'POST',
    path: '/v1/pets',
    headers: [bearer, json, ['Idempotency-Key', 'create-once']],
    body: pet,
  });
  const requests: Array<[string, Parameters<typeof send>[2]]> = [
    ['list', { path: '/v1/pets?limit=2', headers: [bearer] }],
    ['get', { path: '/v1/pets/1', headers: [bearer] }],
    ['?api_key=', { path: `/v1/pets?api_key=${key}` }],
    ['?access_token=', { path: `/v1/pets?access_token=${key}` }],
    ['?api_key= beside a valid key', { path: `/v1/pets?api_key=${key}`, headers: [bearer] }],
    ['a key as a parameter name', { path: `/v1/pets?${key}=1`, headers: [bearer] }],
    ['?limit=<key>', { path: `/v1/pets?limit=${key}`, headers: [bearer] }],
    ['?cursor=<key>', { path: `/v1/pets?cursor=${key}`, headers: [bearer] }],
    ['X-Api-Key', { path: '/v1/pets', headers: [['X-Api-Key', key]] }],
    ['X-Request-Id', { path: '/v1/pets', headers: [['X-Request-Id', key]] }],
    ['Cookie', { path: '/v1/pets', headers: [['Cookie', `api_key=${key}`]] }],
    [
      'Proxy-Authorization',
      { path: '/v1/pets', headers: [['Proxy-Authorization', `Bearer ${key}`]] },
    ],
    ['path /v1/pets/<key>', { path: `/v1/pets/${key}` }],
    ['path /v1/pets/<key> with a key', { path: `/v1/pets/${key}`, headers: [bearer] }],
    ['path /v1/<key>', { path: `/v1/${key}`, headers: [bearer] }],
    ['path /<key>', { path: `/${key}` }],
    ['path with %5F', { path: `/v1/pets/${key.replaceAll('_', '%5F')}`, headers: [bearer] }],
    ['path /v1/<key> with %5F', { path: `/v1/${key.replaceAll('_', '%5F')}`, headers: [bearer] }],
    [
      'body field',
      {
        method: 'POST',
        path: '/v1/pets',
        headers: [bearer, json],
        body: `{"name":"x","categoryId":1,"apiKey":"${key}"}`,
      },
    ],
    [
      'body property name twice',
      {
        method: 'POST',
        path: '/v1/pets',
        headers: [bearer, json],
        body: `{"${key}":1,"${key}":2}`,
      },
    ],
    [
      'body cut short',
      { method: 'POST', path: '/v1/pets', headers: [bearer, json], body: `{"name":"${key}` },
    ],
    [
      'body a bare string',
      { method: 'POST', path: '/v1/pets', headers: [bearer, json], body: `"${key}"` },
    ],
    [
      'body as text',
      {
        method: 'POST',
        path: '/v1/pets',
        headers: [bearer, ['Content-Type', 'text/plain']],
        body: key,
      },
    ],
    ['Basic scheme', { path: '/v1/pets', headers: [['Authorization', `Basic ${key}`]] }],
    ['no scheme', { path: '/v1/pets', headers: [['Authorization', key]] }],
    [
      'Bearer with a second word',
      { path: '/v1/pets', headers: [['Authorization', `Bearer ${key} ${key}`]] },
    ],
    [
      'wrong checksum',
      { path: '/v1/pets', headers: [['Authorization', `Bearer ${flipLast(key)}`]] },
    ],
    [
      'two Authorization headers',
      { path: '/v1/pets', headers: [bearer, ['Authorization', `Bearer ${other}`]] },
    ],
    [
      'two Authorization headers on a create',
      { method: 'POST', path: '/v1/pets', headers: [bearer, bearer, json], body: pet },
    ],
    ['headers over 16 KiB', { path: '/v1/pets', headers: [bearer, ['X-Pad', 'a'.repeat(17_000)]] }],
    ['a header the parser refuses', { path: '/v1/pets', headers: [['X-Api-Key', `${key}\u0001`]] }],
  ];
  const answers = [created];
  for (const [what, request] of requests) answers.push(await send(url, what, request));
  return answers;
}

const EXPECTED_STATUSES: Record<string, number> = {
  create: 201,
  list: 200,
  get: 200,
  '?api_key=': 401,
  '?access_token=': 401,
  '?api_key= beside a valid key': 400,
  'a key as a parameter name': 400,
  '?limit=<key>': 400,
  '?cursor=<key>': 400,
  'X-Api-Key': 401,
  'X-Request-Id': 401,
  Cookie: 401,
  'Proxy-Authorization': 401,
  'path /v1/pets/<key>': 401,
  'path /v1/pets/<key> with a key': 400,
  'path /v1/<key>': 404,
  'path /<key>': 404,
  'path with %5F': 400,
  'path /v1/<key> with %5F': 404,
  'body field': 400,
  'body property name twice': 400,
  'body cut short': 400,
  'body a bare string': 400,
  'body as text': 415,
  'Basic scheme': 401,
  'no scheme': 401,
  'Bearer with a second word': 401,
  'wrong checksum': 401,
  'two Authorization headers': 400,
  'two Authorization headers on a create': 400,
  'headers over 16 KiB': 431,
  'a header the parser refuses': 400,
};

/** Which of `secrets` occur in `text`. */
function found(text: string | Buffer, secrets: readonly string[]): string[] {
  const haystack = typeof text === 'string' ? text : text.toString('latin1');
  return secrets.filter((secret) => haystack.includes(secret));
}

function mode(path: string): string {
  return (statSync(path).mode & 0o777).toString(8);
}

describe('keys in logs and database files', () => {
  it('writes no key, whole or in part, to any log line or database file, which are owner-only', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'petstore-secrets-'));
    dirs.push(dir);
    // Folders the service creates itself, under a umask that would let everyone read.
    const data = join(dir, 'data', 'private');
    const path = join(data, 'petstore.db');
    const database = `sqlite:${path}`;
    const server = await spawnServer({ DATABASE_URL: database, LOG_LEVEL: 'debug' }, 'node', {
      umask: 0o000,
    });
    running.push(server);
    // Not a terminal: the server makes no first key (see 'the first-key bootstrap' below).
    const first = (await createKey(database, ['--plan', 'free'])).key;

    const issued = [
      first,
      (await createKey(database, ['--plan', 'pro'])).key,
      (await createKey(database, ['--plan', 'business', '--name', 'shop'])).key,
      (
        await createKey(database, [
          '--plan',
          'enterprise',
          '--per-minute',
          '5000',
          '--per-day',
          '9000',
        ])
      ).key,
    ];
    // A key over its life: rolled (both secrets in use during the grace), re-planned, expiring.
    const rolling = await createKey(database, ['--plan', 'pro', '--name', 'rolled']);
    const roll = await petstore(database, ['keys', 'roll', rolling.id, '--grace', '1h']);
    expect(roll.code, roll.stderr).toBe(0);
    const rolledSecret = roll.stdout.trim().split('\n').at(-1) ?? '';
    expect(rolledSecret).toMatch(/^pa_live_[0-9A-Za-z]{36}$/);
    for (const change of [
      ['keys', 'set-plan', rolling.id, '--plan', 'business'],
      ['keys', 'set-expiry', rolling.id, new Date(Date.now() + 86_400_000).toISOString()],
    ]) {
      expect((await petstore(database, change)).code).toBe(0);
    }
    issued.push(rolling.key, rolledSecret);
    const banned = (await createKey(database, ['--plan', 'free'])).key;
    const revoked = await createKey(database, ['--plan', 'free']);
    expect((await petstore(database, ['keys', 'revoke', revoked.id])).code).toBe(0);
    const neverIssued = [generateApiKey('production'), generateApiKey('staging')];
    const keys = [...issued, banned, revoked.key, ...neverIssued];
    const secrets = keys.flatMap(secretsOf);

    const answers: Sent[] = [];
    for (const [i, key] of issued.entries()) {
      answers.push(...(await traffic(server.url, key, issued[(i + 1) % issued.length] ?? key)));
    }
    for (const key of [revoked.key, ...neverIssued]) {
      answers.push(
        await send(server.url, 'not a valid key', {
          path: '/v1/pets',
          headers: [['Authorization', `Bearer ${key}`]],
        }),
      );
    }
    // A key that keeps going after its 429s is banned; that is logged, with its key id. Its 72
    // requests must fall in one minute (a new minute grants 60 more).
    await minuteWithRoom(10_000);
    for (let i = 0; i < 72; i++) {
      answers.push(
        await send(server.url, 'free plan', {
          path: '/v1/pets?limit=1',
          headers: [['Authorization', `Bearer ${banned}`]],
        }),
      );
    }

    const unexpected = answers.filter(
      (answer) => (EXPECTED_STATUSES[answer.what] ?? answer.status) !== answer.status,
    );
    expect(unexpected).toEqual([]);
    expect(answers.filter((a) => a.what === 'not a valid key').map((a) => a.status)).toEqual([
      401, 401, 401,
    ]);
    expect(
      answers
        .filter((a) => a.what === 'free plan')
        .map((a) => a.status)
        .slice(-2),
    ).toEqual([429, 429]);

    // The database files while the server runs: the main file, its WAL and shared memory.
    const files = () => readdirSync(data).map((name) => join(data, name));
    expect(files().sort()).toEqual([path, `${path}-shm`, `${path}-wal`]);
    const expectNoSecretInFiles = () => {
      const hits = files().map((file) => ({ file, found: found(readFileSync(file), secrets) }));
      expect(hits).toEqual(files().map((file) => ({ file, found: [] })));
    };
    expectNoSecretInFiles();
    expect([join(dir, 'data'), data].map(mode)).toEqual(['700', '700']);
    expect(files().map(mode)).toEqual(['600', '600', '600']);

    // Checkpointed: the WAL's pages written into the main file.
    const checkpoint = new BetterSqlite3(path);
    try {
      checkpoint.pragma('wal_checkpoint(TRUNCATE)');
    } finally {
      checkpoint.close();
    }
    expectNoSecretInFiles();

    // Stopped: SQLite folds the WAL into the file and removes it.
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    expect(files()).toEqual([path]);
    expectNoSecretInFiles();
    expect(mode(path)).toBe('600');

    // Every line the process wrote, stdout and stderr, at debug level, without exception.
    const logged = server.output().split('\n');
    const leaks = logged.flatMap((line) =>
      found(line, secrets).map((secret) => ({ secret, line })),
    );
    expect(leaks).toEqual([]);

    // The check had something to look at: a line per request, keys in paths masked, the ban.
    const json = logged.filter((line) => line.startsWith('{'));
    expect(
      json.filter((line) => line.includes('"incoming request"')).length,
      // Two requests of each key's traffic are refused by the parser, before any log line.
    ).toBeGreaterThanOrEqual(answers.length - 2 * issued.length);
    expect(json.filter((line) => line.includes('pa_live_[redacted]')).length).toBeGreaterThan(10);
    expect(json.filter((line) => line.includes('API key banned'))).toHaveLength(1);
    // What operators read about keys (the audit trail, the JSON list, usage): no secret either,
    // and it had something to show: the roll, and the requests of both secrets of that key.
    const audit = await petstore(database, ['keys', 'audit', '--json']);
    const list = await petstore(database, ['keys', 'list', '--json']);
    const usage = await petstore(database, ['keys', 'usage', rolling.id, '--days', '1', '--json']);
    for (const output of [audit, list, usage]) {
      expect(output.code, output.stderr).toBe(0);
      expect(found(output.stdout + output.stderr, secrets)).toEqual([]);
    }
    const actions = (JSON.parse(audit.stdout) as Array<{ keyId: string; action: string }>)
      .filter((entry) => entry.keyId === rolling.id)
      .map((entry) => entry.action);
    expect(actions).toEqual(['create', 'roll', 'set_plan', 'set_expiry']);
    const [today] = JSON.parse(usage.stdout) as Array<{ admitted: number; refused: number }>;
    expect((today?.admitted ?? 0) + (today?.refused ?? 0)).toBeGreaterThan(0);
    console.log(
      `secrets: ${keys.length} keys (${secrets.length} strings) in ${answers.length} requests; ` +
        `${logged.length} lines of output and ${statSync(path).size} bytes of database clean`,
    );
  });
});

// The first-key bootstrap writes a secret only where a person asked for it: an interactive start
// on SQLite (stderr a terminal). Spawned with pipes, as a process manager, container runtime or
// the cluster script runs it, the server makes no key and says how to make one.
const ANY_SECRET = /pa_(?:live|test)_[0-9A-Za-z]{4,}/;
const HOW_TO_MAKE_A_KEY = 'npm run petstore -- keys create --plan free';
const hasPostgres = await postgresFor('the first-key bootstrap on PostgreSQL');

/** How many keys `keys list` shows: one line each. */
async function keyCount(database: string): Promise<number> {
  const listed = await petstore(database, ['keys', 'list']);
  if (listed.code !== 0) throw new Error(`keys list failed: ${listed.stderr}`);
  return listed.stdout.split('\n').filter((line) => line.trim() !== '').length;
}

/** Starts the server, lets it come up, stops it with SIGTERM: every line it wrote. */
async function startAndStop(env: Record<string, string>): Promise<string[]> {
  const server = await spawnServer({ LOG_LEVEL: 'debug', ...env });
  running.push(server);
  server.child.kill('SIGTERM');
  expect(await server.exited).toBe(0);
  return server.output().split('\n');
}

/** The server under `script`, whose pty makes stdout and stderr terminals; stopped at 'listening'. */
async function interactiveStart(env: Record<string, string>): Promise<string> {
  const port = await freePort();
  const child = spawn('script', ['-qec', 'exec node dist/main.js', '/dev/null'], {
    cwd: REPO_ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      ...testRunEnv(),
      PORT: String(port),
      ...env,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 60_000;
  try {
    while (!output.includes('listening') && child.exitCode === null && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    // script and the server it runs: the process group this test started.
    if (child.pid !== undefined && child.exitCode === null) process.kill(-child.pid, 'SIGTERM');
    await exited;
  }
  if (!output.includes('listening')) throw new Error(`server did not start:\n${output}`);
  return output;
}

describe('the first-key bootstrap', () => {
  it('on SQLite, started non-interactively: no secret in any line, no key made, the way to make one', async () => {
    const database = tempDatabaseUrl();
    const lines = await startAndStop({ DATABASE_URL: database });
    expect(lines.filter((line) => ANY_SECRET.test(line))).toEqual([]);
    expect(lines.some((line) => line.includes(HOW_TO_MAKE_A_KEY))).toBe(true);
    expect(await keyCount(database)).toBe(0);
  });

  it.runIf(hasPostgres)(
    'on PostgreSQL with an empty key table: no secret in any line, no key made',
    async () => {
      const schema = await createTestSchema();
      try {
        const lines = await startAndStop({ DATABASE_URL: schema.url });
        expect(lines.filter((line) => ANY_SECRET.test(line))).toEqual([]);
        expect(lines.some((line) => line.includes(HOW_TO_MAKE_A_KEY))).toBe(true);
        expect(await keyCount(schema.url)).toBe(0);
      } finally {
        await schema.drop();
      }
    },
  );

  it('at a terminal on SQLite: shows the first key once, which exists; PETSTORE_BOOTSTRAP_KEY=off makes none', async () => {
    const database = tempDatabaseUrl();
    const output = await interactiveStart({ DATABASE_URL: database });
    expect(output).toContain(FIRST_KEY_BANNER);
    const shown = output.match(/pa_live_[0-9A-Za-z]{36}/g) ?? [];
    expect(shown).toHaveLength(1);
    expect(await keyCount(database)).toBe(1);

    const off = tempDatabaseUrl();
    const quiet = await interactiveStart({ DATABASE_URL: off, PETSTORE_BOOTSTRAP_KEY: 'off' });
    expect(quiet).not.toMatch(ANY_SECRET);
    expect(quiet).not.toContain(FIRST_KEY_BANNER);
    expect(await keyCount(off)).toBe(0);
  });
});

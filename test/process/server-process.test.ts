import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  createKey,
  REPO_ROOT,
  spawnServer,
  tempDatabaseUrl,
  type ServerProcess,
  untilOutput,
} from '../helpers/server-process.js';
import { serverCaughtUp } from '../helpers/raw-http.js';
import { testRunEnv } from '../helpers/test-run.js';

const running: ServerProcess[] = [];
/** The compile cache of the restart's second server (Node's default one is shared by every run). */
const compileCache = mkdtempSync(join(tmpdir(), 'petstore-compile-cache-'));
afterAll(() => {
  for (const server of running.splice(0))
    if (server.child.exitCode === null) server.child.kill('SIGKILL');
  rmSync(compileCache, { recursive: true, force: true });
});

/** The files in a compile cache folder (Node keeps them in a subfolder per Node version). */
function cachedFiles(folder: string): string[] {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => entry.name);
}

async function start(env: Record<string, string>, how: 'npm' | 'node' = 'node') {
  const server = await spawnServer(env, how);
  running.push(server);
  return server;
}

/** The JSON lines of the log (stdout is not a terminal), apart from the first key's banner. */
function logLines(output: string): Array<{ msg: string } & Record<string, unknown>> {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { msg: string } & Record<string, unknown>);
}

async function createPet(url: string, key: string, name: string): Promise<number> {
  const res = await fetch(`${url}/v1/pets`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name, categoryId: 1 }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: number }).id;
}

describe('the server process', () => {
  it('exits 1 naming the variable when PORT=abc', () => {
    const result = spawnSync('node', ['dist/main.js'], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', ...testRunEnv(), PORT: 'abc' },
      encoding: 'utf8',
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('PORT must be an integer 1-65535 (got "abc")');
  });

  /**
   * A first start on a new file (output piped: no key is made or printed, the log says how to make
   * one; test/process/secrets.test.ts checks every line for a secret, and the interactive start),
   * a key made with the CLI, a few requests, SIGTERM, and a second start on the same file: made
   * once, by whichever of the tests below runs first (each server start costs seconds on a busy
   * machine), and each test checks its own part of it.
   */
  let restart:
    | Promise<{
        first: ServerProcess;
        key: string;
        listStatus: number;
        pets: number[];
        firstExit: number | null;
        second: ServerProcess;
      }>
    | undefined;
  const restarted = () =>
    (restart ??= (async () => {
      const database = tempDatabaseUrl();
      const first = await start({ DATABASE_URL: database });
      const key = await createKey(database);
      const listed = await fetch(`${first.url}/v1/pets`, {
        headers: { authorization: `Bearer ${key}` },
      });
      const pets = [
        await createPet(first.url, key, 'Stays'),
        await createPet(first.url, key, 'Stays too'),
      ];
      first.child.kill('SIGTERM');
      const firstExit = await first.exited;
      const second = await start({ DATABASE_URL: database, NODE_COMPILE_CACHE: compileCache });
      return { first, key, listStatus: listed.status, pets, firstExit, second };
    })());

  it('makes no key on a non-interactive first start, says how to make one, and serves the one made', async () => {
    const { first, listStatus, firstExit, second } = await restarted();

    expect(first.output()).not.toMatch(/pa_live_/);
    expect(first.output()).toContain('npm run petstore -- keys create --plan free');
    expect(listStatus).toBe(200);
    expect(firstExit).toBe(0);
    expect(second.output()).not.toMatch(/pa_live_/);
  });

  it('keeps pets across a graceful restart on the same file', async () => {
    const { key, pets, firstExit, second } = await restarted();

    expect(firstExit).toBe(0);
    for (const id of pets) {
      const res = await fetch(`${second.url}/v1/pets/${id}`, {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(res.status).toBe(200);
    }
  });

  it('writes its compiled modules to the compile cache once it listens, not only when it exits', async () => {
    const { second } = await restarted();

    // Written before it says it listens; it still runs (it is killed after the file).
    expect(second.child.exitCode).toBeNull();
    expect(cachedFiles(compileCache).length).toBeGreaterThan(0);
  });

  // A SIGKILL cannot show durability: the kernel keeps the page cache of a killed process, so even
  // synchronous=OFF would keep every pet. What makes a 201 survive a power cut is the connection
  // the server commits on (WAL, synchronous=FULL: the WAL is fsynced before the answer), so that
  // is what this checks, as the server read it back from that connection.
  // test/process/crash-matrix.test.ts kills servers in the middle of creates.
  it('commits on a connection in WAL mode with synchronous=FULL (2), as read back from it', async () => {
    const { first, pets } = await restarted();
    expect(pets).toHaveLength(2);

    const started = logLines(first.output()).find((line) =>
      line.msg.startsWith('Pet Adoption Service listening'),
    );

    expect(started?.durability).toEqual({
      journal_mode: 'wal',
      synchronous: 2,
      synchronous_name: 'FULL',
    });
  });

  it('finishes an in-flight request after SIGTERM sent to npm start, then exits 0', async () => {
    const database = tempDatabaseUrl();
    const server = await start({ DATABASE_URL: database }, 'npm');
    const key = await createKey(database);
    const body = JSON.stringify({ name: 'In flight', categoryId: 1 });
    const { port } = new URL(server.url);
    const socket = connect(Number(port), '127.0.0.1');
    let response = '';
    socket.on('data', (chunk) => (response += chunk.toString()));
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    // Headers and half the body now; the rest only after the signal.
    socket.write(
      `POST /v1/pets HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n` +
        body.slice(0, 10),
    );
    await serverCaughtUp(server.url);
    server.child.kill('SIGTERM');
    await untilOutput(server, 'stopping: finishing in-flight requests');
    socket.end(body.slice(10));
    await new Promise<void>((resolve) => socket.once('close', () => resolve()));
    expect(response).toMatch(/^HTTP\/1\.1 201/);
    expect(await server.exited).toBe(0);
  });
});

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createSqliteStorage } from '../../src/storage/sqlite/sqlite-storage.js';
import { createKey, petstore } from '../cli/cli-harness.js';
import { parsePets, startCreating, UNLIMITED_KEY_ARGS } from '../helpers/pet-traffic.js';
import { REPO_ROOT, spawnServer, type ServerProcess } from '../helpers/server-process.js';
import { testRunEnv } from '../helpers/test-run.js';

const running: ServerProcess[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const server of running.splice(0)) {
    if (server.child.exitCode === null) server.child.kill('SIGKILL');
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function start(database: string): Promise<ServerProcess> {
  const server = await spawnServer({ DATABASE_URL: database });
  running.push(server);
  return server;
}

/** The petstore binary, as an operator runs it next to a running server. */
function petstoreBinary(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stderr: string; ms: number }> {
  const started = performance.now();
  const child = spawn('node', ['dist/cli/main.js', ...args], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...testRunEnv(), ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) =>
    child.once('exit', (code) => resolve({ code, stderr, ms: performance.now() - started })),
  );
}

const SEEDED = 100_000;
const REPORT = /: ([\d,]+) pages of ([\d,]+) bytes \(([\d.]+ [KM]iB)\) in ([\d.]+) s\.\n$/;

describe('petstore backup next to a server taking writes', () => {
  it('copies every pet acknowledged before it began into a consistent file that a server restores', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'petstore-backup-'));
    dirs.push(dir);
    const database = `sqlite:${join(dir, 'petstore.db')}`;
    const copy = join(dir, 'copy.db');
    expect((await petstore(database, ['seed', '--count', String(SEEDED)])).code).toBe(0);
    const { key } = await createKey(database, UNLIMITED_KEY_ARGS);
    const server = await start(database);
    const traffic = startCreating(server.url, key, {
      workers: 8,
      prefix: `backup-${Date.now()}`,
      idempotent: false,
    });
    await traffic.untilAcknowledged(100);

    const before = traffic.acknowledged();
    const backup = await petstoreBinary(['backup', copy], { DATABASE_URL: database });
    const whileCopying = traffic.acknowledged().slice(before.length);
    await traffic.untilAcknowledged(traffic.acknowledged().length + 20);
    await traffic.stop();
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);

    expect(backup.code).toBe(0);
    const [, pages, pageSize, size, seconds] = REPORT.exec(backup.stderr) ?? [];
    expect(pages).toBeDefined();
    expect((statSync(copy).mode & 0o777).toString(8)).toBe('600');
    // Writes went on while the copy was made, and none of them failed or waited long.
    expect(whileCopying.length).toBeGreaterThan(0);
    expect(traffic.sent.filter((create) => create.status !== 201)).toEqual([]);

    const check = new BetterSqlite3(copy);
    try {
      expect(check.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      check.close();
    }

    // Restored: a new server on the copy serves every pet acknowledged before the backup began,
    // with the key that existed then.
    const restored = await start(`sqlite:${copy}`);
    for (const create of before) {
      const res = await fetch(`${restored.url}/v1/pets/${create.pet?.id}`, {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(res.status).toBe(200);
      expect(parsePets(await res.text())).toEqual([create.pet]);
    }
    restored.child.kill('SIGTERM');
    expect(await restored.exited).toBe(0);

    // One snapshot: of the creates acknowledged in all, the copy holds exactly those up to some
    // point in commit (id) order, and every seeded pet.
    const storage = createSqliteStorage(copy);
    try {
      const all = await storage.pets.list({ afterId: 0, limit: 10_000_000 });
      const created = all.slice(SEEDED);
      expect(all.slice(0, SEEDED).every((pet) => !pet.name.startsWith('backup-'))).toBe(true);
      const inCopy = new Set(created.map((pet) => pet.id));
      const lastInCopy = Math.max(...inCopy);
      const acknowledgedIds = traffic.acknowledged().map((create) => create.pet?.id ?? 0);
      expect(acknowledgedIds.filter((id) => id <= lastInCopy && !inCopy.has(id))).toEqual([]);
      expect(acknowledgedIds.filter((id) => id > lastInCopy && inCopy.has(id))).toEqual([]);
      console.log(
        `backup under writes: ${pages} pages of ${pageSize} bytes (${size}) copied in ${seconds} s ` +
          `(the command ran ${Math.round(backup.ms)} ms); ${before.length} creates acknowledged ` +
          `before it began, ${whileCopying.length} while it ran (slowest ` +
          `${Math.round(Math.max(...whileCopying.map((create) => create.ms ?? 0)))} ms); ` +
          `the copy holds ${created.length} of ${traffic.acknowledged().length} acknowledged creates`,
      );
    } finally {
      await storage.close();
    }
  });
});

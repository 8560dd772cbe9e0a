import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type AnsweredCreate,
  create,
  expectAcknowledgedKept,
  expectRefusedAsOutage,
  type Probe,
  probeHealth,
  startServer,
  untilReady,
} from '../helpers/bad-days.js';
import type { ServerProcess } from '../helpers/server-process.js';

/**
 * Writes that cannot succeed on SQLite (issue 19 item 2): a full disk (a 4 MiB tmpfs filled up)
 * and database files made immutable (chattr +i). Creates are answered 503 `unavailable` with
 * Retry-After, never 500; /healthz stays fast; /readyz says not ready while writes fail and ready
 * again by itself once they can succeed; no acknowledged pet is lost. Needs root (mount, chattr);
 * runs the built server.
 */

const isRoot = process.getuid?.() === 0;
const running: ServerProcess[] = [];
const mounts: string[] = [];
afterEach(() => {
  for (const server of running.splice(0)) {
    if (server.child.exitCode === null) server.child.kill('SIGKILL');
  }
  for (const dir of mounts.splice(0)) {
    execFileSync('sh', ['-c', `chattr -i ${dir}/* 2>/dev/null; umount -l ${dir}`]);
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A small tmpfs of its own: filling it fills no one else's disk, and it supports chattr. */
function smallDisk(): string {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-disk-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', dir]);
  mounts.push(dir);
  return dir;
}

async function creates(url: string, key: string, prefix: string, count: number) {
  const sent: AnsweredCreate[] = [];
  for (let i = 0; i < count; i++) sent.push(await create(url, key, prefix));
  return sent;
}

/** After the fault: creates succeed again, /healthz stayed fast, nothing acknowledged is lost. */
async function expectRecovered(
  server: ServerProcess,
  key: string,
  health: readonly Probe[],
  after: readonly AnsweredCreate[],
  acknowledged: readonly AnsweredCreate[],
) {
  expect(after.every((c) => c.status === 201)).toBe(true);
  expect(Math.max(...health.map((p) => p.ms))).toBeLessThan(1_000);
  await expectAcknowledgedKept(server.url, key, acknowledged);
}

describe.skipIf(!isRoot)('SQLite writes that cannot succeed', () => {
  it('a full disk: 503 with Retry-After, not ready, and back by itself once there is room', async () => {
    const dir = smallDisk();
    const { server, key } = await startServer(`sqlite:${join(dir, 'pets.db')}`);
    running.push(server);
    const before = await creates(server.url, key, 'before', 3);
    const probes = probeHealth(server.url);
    // Fills what is left, then sends creates until the database needs a page it cannot have.
    const filler = join(dir, 'filler');
    execFileSync('sh', ['-c', `dd if=/dev/zero of=${filler} bs=64k 2>/dev/null; true`]);
    const during: AnsweredCreate[] = [];
    for (let i = 0; i < 400 && !during.some((c) => c.status === 503); i++) {
      during.push(...(await creates(server.url, key, `full ${'x'.repeat(60)}`, 1)));
    }
    console.log(`disk full, during: ${during.map((c) => `${c.status}:${c.code}`).join(',')}`);
    const notReadyMs = await untilReady(server.url, 503, 5_000);
    const stillRefused = await creates(server.url, key, 'still full', 2);
    rmSync(filler);
    const readyAgainMs = await untilReady(server.url, 200, 10_000);
    const after = await creates(server.url, key, 'after', 3);
    await probes.stop();
    const refused = [...during, ...stillRefused].filter((c) => c.status === 503).length;
    console.log(
      `disk full: ${during.length + stillRefused.length} creates, ${refused} x 503, statuses ` +
        `${[...new Set([...during, ...stillRefused].map((c) => c.status ?? c.error))].join(',')}; ` +
        `not ready after ${notReadyMs} ms, ready again ${readyAgainMs} ms after room; ` +
        `slowest /healthz ${Math.round(Math.max(...probes.health.map((p) => p.ms)))} ms`,
    );

    expectRefusedAsOutage([...during, ...stillRefused]);
    expect(refused).toBeGreaterThan(0);
    expect(stillRefused.every((c) => c.status === 503)).toBe(true);
    await expectRecovered(server, key, probes.health, after, [...before, ...during, ...after]);
  }, 30_000);

  it('immutable database files: never a 500, nothing acknowledged lost, ready after', async () => {
    const dir = smallDisk();
    const path = join(dir, 'pets.db');
    const { server, key } = await startServer(`sqlite:${path}`);
    running.push(server);
    const before = await creates(server.url, key, 'before', 3);
    writeFileSync(join(dir, 'probe'), '');
    execFileSync('chattr', ['+i', path, `${path}-wal`]);
    const probes = probeHealth(server.url);
    const during = await creates(server.url, key, 'immutable', 4);
    console.log(`immutable, during: ${during.map((c) => `${c.status}:${c.code}`).join(',')}`);
    execFileSync('chattr', ['-i', path, `${path}-wal`]);
    const readyAgainMs = await untilReady(server.url, 200, 10_000);
    const after = await creates(server.url, key, 'after', 3);
    await probes.stop();
    console.log(
      `immutable: ${during.length} creates, statuses ${during.map((c) => c.status ?? c.error).join(',')}; ` +
        `ready ${readyAgainMs} ms after chattr -i; ` +
        `slowest /healthz ${Math.round(Math.max(...probes.health.map((p) => p.ms)))} ms`,
    );

    // The commit worker keeps its files open, and Linux checks the immutable flag when a file is
    // opened for writing: its writes still land (and are kept). Whatever comes, never a 500.
    expectRefusedAsOutage(during);
    await expectRecovered(server, key, probes.health, after, [...before, ...during, ...after]);
  }, 30_000);
});

import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
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
import { scaled } from '../helpers/machine.js';

/**
 * Writes that cannot succeed on SQLite (issue 19 item 2): a full disk (a 4 MiB tmpfs filled up)
 * and database files made immutable (chattr +i on the database, its WAL and its mapped -shm index,
 * on a loop-mounted ext4 image). Creates are answered 503 `unavailable` with
 * Retry-After, never 500; /healthz stays fast; /readyz says not ready while writes fail and ready
 * again by itself once they can succeed; no acknowledged pet is lost. Needs root (mount, a loop device, chattr);
 * runs the built server.
 */

const isRoot = process.getuid?.() === 0;
/** A loop device and mkfs.ext4, for the immutable-files test; said plainly when missing. */
const ext4Missing = (() => {
  if (!isRoot) return 'needs root';
  if (!existsSync('/dev/loop-control')) return 'no loop device (/dev/loop-control)';
  try {
    execFileSync('mkfs.ext4', ['-V'], { stdio: 'ignore' });
    return undefined;
  } catch {
    return 'no mkfs.ext4';
  }
})();
if (isRoot && ext4Missing !== undefined) {
  console.warn(`bad-days.sqlite-disk: immutable-files test skipped: ${ext4Missing}`);
}
const running: ServerProcess[] = [];
const mounts: string[] = [];
const images: string[] = [];
afterEach(() => {
  for (const server of running.splice(0)) {
    if (server.child.exitCode === null) server.child.kill('SIGKILL');
  }
  for (const dir of mounts.splice(0)) {
    execFileSync('sh', ['-c', `chattr -i ${dir}/* 2>/dev/null; umount -l ${dir}`]);
    rmSync(dir, { recursive: true, force: true });
  }
  for (const image of images.splice(0)) rmSync(image, { force: true });
});

/** A small tmpfs of its own: filling it fills no one else's disk. */
function smallDisk(): string {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-disk-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', dir]);
  mounts.push(dir);
  return dir;
}

/**
 * A 16 MiB ext4 file system in an image file of its own, loop-mounted: ext4 checks the immutable
 * flag on every write, as a production disk would (tmpfs only when a file is opened).
 */
function ext4Disk(): string {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-ext4-'));
  const image = `${dir}.img`;
  images.push(image);
  execFileSync('truncate', ['-s', '16M', image]);
  execFileSync('mkfs.ext4', ['-q', image]);
  execFileSync('mount', ['-o', 'loop', image, dir]);
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
  expect(Math.max(...health.map((p) => p.ms))).toBeLessThan(scaled(1_000));
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
  });

  it('a full disk: /readyz stays 503 over several write probes while creates still fail', async () => {
    // Issue 34 item 8: creates got 503 while /readyz answered 200, its write probe (one page)
    // fitting where a create did not.
    const dir = smallDisk();
    const { server, key } = await startServer(`sqlite:${join(dir, 'pets.db')}`);
    running.push(server);
    await creates(server.url, key, 'before', 3);
    const filler = join(dir, 'filler');
    execFileSync('sh', ['-c', `dd if=/dev/zero of=${filler} bs=64k 2>/dev/null; true`]);
    const refusedFirst: AnsweredCreate[] = [];
    for (let i = 0; i < 400 && !refusedFirst.some((c) => c.status === 503); i++) {
      refusedFirst.push(...(await creates(server.url, key, `full ${'x'.repeat(60)}`, 1)));
    }
    // Past three of the writer's probe periods (one a second): every answer while still full.
    const readyz: number[] = [];
    const during: AnsweredCreate[] = [];
    const until = Date.now() + 3_500;
    while (Date.now() < until) {
      during.push(await create(server.url, key, `still full ${'x'.repeat(60)}`));
      const res = await fetch(`${server.url}/readyz`, { signal: AbortSignal.timeout(5_000) });
      readyz.push(res.status);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    rmSync(filler);
    const readyAgainMs = await untilReady(server.url, 200, 10_000);
    console.log(
      `disk full: creates ${during.map((c) => c.status).join(',')}; /readyz ${readyz.join(',')}; ` +
        `ready again ${readyAgainMs} ms after room`,
    );
    expect(refusedFirst.some((c) => c.status === 503)).toBe(true);
    expect(during.every((c) => c.status === 503)).toBe(true);
    expect(readyz.filter((status) => status !== 503)).toEqual([]);
    expect((await create(server.url, key, 'after')).status).toBe(201);
  });

  it.skipIf(ext4Missing !== undefined)(
    'immutable database files: 503 with Retry-After, not ready, and back by itself after chattr -i',
    async () => {
      const dir = ext4Disk();
      const path = join(dir, 'pets.db');
      const { server, key } = await startServer(`sqlite:${path}`);
      running.push(server);
      const before = await creates(server.url, key, 'before', 3);
      const probes = probeHealth(server.url);
      const files = [path, `${path}-wal`, `${path}-shm`];
      execFileSync('chattr', ['+i', ...files]);
      // Written back, the -shm file's mapped pages are clean again: SQLite's next store into one of
      // them asks ext4 for a writable page of an immutable file, which is a SIGBUS.
      execFileSync('sync');
      const during = await creates(server.url, key, 'immutable', 4);
      // A read may store into the index too (its read mark): refused alike, the index's pages
      // written back again meanwhile. (A full page or a pet read before is answered from memory.)
      execFileSync('sync');
      const read = await fetch(`${server.url}/v1/pets?limit=100`, {
        headers: { authorization: `Bearer ${key}` },
      });
      const notReadyMs = await untilReady(server.url, 503, 5_000);
      const stillRefused = await creates(server.url, key, 'still immutable', 2);
      execFileSync('chattr', ['-i', ...files]);
      const readyAgainMs = await untilReady(server.url, 200, 10_000);
      const after = await creates(server.url, key, 'after', 3);
      await probes.stop();
      // Stopped while the files are immutable again: a clean exit, and every pet there after.
      execFileSync('chattr', ['+i', ...files]);
      execFileSync('sync');
      server.child.kill('SIGTERM');
      const exitCode = await server.exited;
      const exitSignal = server.child.signalCode;
      execFileSync('chattr', ['-i', ...files]);
      const restarted = await startServer(`sqlite:${path}`);
      running.push(restarted.server);
      const refused = [...during, ...stillRefused];
      console.log(
        `immutable: ${refused.length} creates, ${refused.map((c) => `${c.status ?? c.error}:${c.code}:${c.retryAfter}`).join(',')}; ` +
          `not ready after ${notReadyMs} ms, ready again ${readyAgainMs} ms after chattr -i; ` +
          `/readyz 503 x ${probes.ready.filter((p) => p.status === 503).length}; ` +
          `slowest /healthz ${Math.round(Math.max(...probes.health.map((p) => p.ms)))} ms`,
      );

      // ext4 refuses writes to an immutable file also through descriptors opened before (tmpfs
      // does not: the commit worker's writes would still land there, hence the ext4 image).
      expect([exitCode, exitSignal]).toEqual([0, null]);
      expect([read.status, read.headers.get('retry-after')]).toEqual([503, '5']);
      expectRefusedAsOutage(refused);
      expect(refused.every((c) => c.status === 503)).toBe(true);
      // untilReady above saw /readyz answer 503 (a probe every 200 ms may miss so short a window).
      await expectRecovered(restarted.server, key, probes.health, after, [...before, ...after]);
    },
  );
});

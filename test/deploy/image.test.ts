import { type ChildProcess, execFile, execFileSync, spawn, spawnSync } from 'node:child_process';
import { chownSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEPLOY_DIR } from './manifests.js';

/**
 * Builds deploy/Containerfile for real with buildah (vfs storage, chroot isolation: what works in
 * this sandbox, where podman's runtime cannot start containers) on a local stand-in for the
 * official node:24-slim (test/deploy/local-base-image.sh, cached), then runs the image's own CMD
 * and HEALTHCHECK inside it with `buildah run` on the host's network.
 */
const ROOT = join(DEPLOY_DIR, '..');
const has = (program: string) => spawnSync(program, ['--version']).status === 0;
const tools = has('buildah') && spawnSync('debootstrap', ['--version']).error === undefined;
const inCi = process.env.CI === 'true';
// Minutes of building (a cold build takes half an hour on two cores): only when asked for, by
// `npm run test:image`, so that `npm test` stays a couple of minutes.
const asked = process.env.PETSTORE_IMAGE_TEST === '1';
const IMAGE = 'localhost/petstore:test-deploy';
const STORAGE = ['--storage-driver', 'vfs'];
const USER_ID = 10001;
/** The commit the image is built from, passed in: the build itself sees no .git. */
const HEAD = spawnSync('git', ['rev-parse', 'HEAD'], {
  cwd: ROOT,
  encoding: 'utf8',
}).stdout?.trim();

if (!asked) {
  console.warn('skipping test/deploy/image.test.ts: run it with npm run test:image');
} else if (!tools && !inCi) {
  console.warn(
    'skipping test/deploy/image.test.ts: buildah and debootstrap are not installed ' +
      '(apt-get install -y buildah debootstrap); CI=true makes this a failure',
  );
}

function buildah(args: readonly string[]): string {
  return execFileSync('buildah', [...STORAGE, ...args], { encoding: 'utf8', cwd: ROOT });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

function descendants(pid: number): number[] {
  const children = readdirSync(`/proc/${pid}/task`).flatMap((task) => {
    try {
      return readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean);
    } catch {
      return [];
    }
  });
  return children.map(Number).flatMap((child) => [child, ...descendants(child)]);
}

function commandLine(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
}

/** The server: buildah's chroot helper execs the CMD with the program's path resolved. */
function serverProcess(buildahPid: number | undefined): number | undefined {
  return descendants(buildahPid ?? 0).find((pid) => {
    const [program, ...args] = commandLine(pid);
    return program?.split('/').at(-1) === 'node' && args.join(' ') === 'dist/main.js';
  });
}

interface ImageConfig {
  Cmd: string[];
  User: string;
  Healthcheck?: { Test: string[] };
}

describe.skipIf(!asked || (!tools && !inCi))('deploy/Containerfile built with buildah', () => {
  let config: ImageConfig;
  let container: string;
  let dataDir: string;
  let port: number;
  let server: ChildProcess | undefined;
  let serverOutput = '';
  let createdAt = 0;
  let key = '';

  beforeAll(async () => {
    expect(
      tools,
      'CI=true needs buildah and debootstrap (apt-get install -y buildah debootstrap)',
    ).toBe(true);
    // Asynchronous, so that the hook's timeout can fire while they run.
    const base = (
      await promisify(execFile)('bash', [join(import.meta.dirname, 'local-base-image.sh')], {
        encoding: 'utf8',
      })
    ).stdout.trim();
    const buildStart = Date.now();
    // --layers: the apt and npm ci steps are reused while package-lock.json does not change.
    // --format docker: OCI image configs have no HEALTHCHECK.
    await promisify(execFile)(
      'buildah',
      [
        ...STORAGE,
        'bud',
        '--isolation',
        'chroot',
        '--layers',
        '--format',
        'docker',
        '--build-arg',
        `BASE=${base}`,
        '--build-arg',
        `PETSTORE_COMMIT=${HEAD}`,
        '-f',
        'deploy/Containerfile',
        '-t',
        IMAGE,
        '.',
      ],
      { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 },
    );
    console.log(`image built in ${((Date.now() - buildStart) / 1000).toFixed(0)} s (on ${base})`);
    config = (
      JSON.parse(buildah(['inspect', '--type', 'image', IMAGE])) as {
        Docker: { config: ImageConfig };
      }
    ).Docker.config;
    container = buildah(['from', '--pull-never', IMAGE]).trim();
    // buildah run mounts a volume of its own on each VOLUME of the image, over a --volume given
    // for the same path (Docker and Podman let --volume win): drop the declaration from this
    // working container only, so that /data is the test's folder.
    buildah(['config', '--volume', '/data-', container]);
    // Whole seconds: find compares with -newermt at that precision.
    await new Promise((r) => setTimeout(r, 1_100));
    createdAt = Date.now();
    await new Promise((r) => setTimeout(r, 1_100));
    dataDir = mkdtempSync(join(tmpdir(), 'petstore-image-data-'));
    // The volume belongs to the image's user, as a runtime's named volume would from the image.
    chownSync(dataDir, USER_ID, USER_ID);
    port = await freePort();
    // Cold (no cached base, no cached layers) this took 25-30 min on this 2-core machine shared
    // with five test runs (vfs copies every layer whole); warm it is the TypeScript build and the
    // final stage. CI keeps buildah's storage and /var/cache/petstore-ci between runs.
  }, 2_700_000);

  afterAll(() => {
    if (server?.exitCode === null) server.kill('SIGKILL');
    if (container !== undefined) buildah(['rm', container]);
    if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
  });

  /** `buildah run` in the built image, on the host's network, with the volume on /data. */
  function run(command: readonly string[], env: Record<string, string> = {}) {
    return [
      ...STORAGE,
      'run',
      '--isolation',
      'chroot',
      '--volume',
      `${dataDir}:/data`,
      ...Object.entries({ PORT: String(port), HOST: '127.0.0.1', ...env }).flatMap(([k, v]) => [
        '--env',
        `${k}=${v}`,
      ]),
      container,
      '--',
      ...command,
    ];
  }

  it('serves /healthz and the API with a key made by the image CLI, as a non-root user', async () => {
    expect(config.Cmd).toEqual(['node', 'dist/main.js']);
    expect(config.User).toBe(`${USER_ID}:${USER_ID}`);
    const created = spawnSync(
      'buildah',
      run(['node', 'dist/cli/main.js', 'keys', 'create', '--plan', 'free']),
      {
        encoding: 'utf8',
      },
    );
    expect(created.status, created.stderr).toBe(0);
    key = created.stdout.trim().split('\n').at(-1) ?? '';
    expect(key).toMatch(/^\S{20,}$/);

    server = spawn('buildah', run(config.Cmd), { stdio: ['ignore', 'pipe', 'pipe'] });
    server.stdout?.on('data', (chunk: Buffer) => (serverOutput += chunk.toString()));
    server.stderr?.on('data', (chunk: Buffer) => (serverOutput += chunk.toString()));
    const base = `http://127.0.0.1:${port}`;
    let health: Response | undefined;
    for (let i = 0; i < 300 && health === undefined; i++) {
      health = await fetch(`${base}/healthz`).catch(async () => {
        await new Promise((r) => setTimeout(r, 100));
        return undefined;
      });
      expect(server.exitCode, serverOutput).toBeNull();
    }
    expect(health?.status, serverOutput).toBe(200);
    // The first log line names the build, commit included.
    expect(serverOutput).toContain(`"commit":"${HEAD}"`);

    const list = await fetch(`${base}/v1/pets?limit=1`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(list.status).toBe(200);
    expect(Array.isArray(await list.json())).toBe(true);
    const refused = await fetch(`${base}/v1/pets?limit=1`);
    expect(refused.status).toBe(401);

    // The process answering is node itself, right under buildah's chroot helper, as the image user.
    const node = serverProcess(server.pid);
    expect(node, 'no node dist/main.js under buildah run').toBeDefined();
    // Its parent is buildah's exec helper: no shell and no npm in between to swallow SIGTERM.
    const parent = Number(
      /^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${node}/status`, 'utf8'))?.[1],
    );
    expect(commandLine(parent)[0]).toBe('buildah-chroot-exec');
    const uid = /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${node}/status`, 'utf8'))?.[1];
    expect(Number(uid)).toBe(USER_ID);
  }, 120_000);

  it("passes the image's HEALTHCHECK while serving", () => {
    const test = config.Healthcheck?.Test ?? [];
    expect(test[0]).toBe('CMD');
    const check = spawnSync('buildah', run(test.slice(1)), { encoding: 'utf8' });
    expect(check.status, check.stderr).toBe(0);
  });

  it("passes the post-deploy check, run by the image's own CLI against the image's server", () => {
    // The check compares the served OpenAPI document and version with the ones this image was
    // built with, so it proves the image serves its own build, not only that something answers.
    const check = spawnSync(
      'buildah',
      run(['node', 'dist/cli/main.js', 'check', `http://127.0.0.1:${port}`, '--allow-writes'], {
        PETSTORE_API_KEY: key,
      }),
      { encoding: 'utf8' },
    );
    expect(check.status, `${check.stdout}\n${check.stderr}`).toBe(0);
    expect(check.stdout).toMatch(/openapi/i);
  });

  it('wrote nothing outside /data, so a read-only root file system holds', () => {
    // While the server runs: the database and its WAL files.
    expect(readdirSync(dataDir).sort()).toEqual([
      'petstore.db',
      'petstore.db-shm',
      'petstore.db-wal',
    ]);
    const root = buildah(['mount', container]).trim();
    try {
      // Files changed in the container's own layer since the build; buildah run itself writes the
      // network files it bind-mounts.
      const changed = execFileSync(
        'find',
        [root, '-xdev', '-newermt', new Date(createdAt).toISOString(), '-type', 'f'],
        { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 },
      )
        .split('\n')
        .filter(Boolean)
        .map((path) => path.slice(root.length))
        .filter(
          (path) =>
            !['/etc/hosts', '/etc/resolv.conf', '/etc/hostname', '/run/.containerenv'].includes(
              path,
            ),
        );
      expect(changed).toEqual([]);
    } finally {
      buildah(['umount', container]);
    }
  });

  it('stops with exit status 0 on SIGTERM, and the HEALTHCHECK then fails', async () => {
    const node = serverProcess(server?.pid);
    expect(node).toBeDefined();
    const exited = new Promise<number | null>((resolve) =>
      server?.once('exit', (code) => resolve(code)),
    );
    process.kill(node ?? 0, 'SIGTERM');
    expect(await exited, serverOutput).toBe(0);
    expect(serverOutput).toMatch(/"msg":"stopped"/);
    const check = spawnSync('buildah', run((config.Healthcheck?.Test ?? []).slice(1)), {
      encoding: 'utf8',
    });
    expect(check.status).toBe(1);
  });
});

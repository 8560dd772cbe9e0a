import { type ChildProcess, execFile, execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  accessSync,
  constants,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/redis.js';
import { freePort } from '../helpers/server-process.js';
import { testRunEnv } from '../helpers/test-run.js';
import { type Instruction, parseContainerfile, type Stage } from './containerfile.js';
import { DEPLOY_DIR } from './manifests.js';

/**
 * The image's inputs, checked on every run without a container runtime (the full buildah build,
 * test/deploy/image.test.ts, takes minutes and runs before a release): each stage of
 * deploy/Containerfile gets a folder of its own standing for its root, receives exactly what its
 * COPY lines name (from a fresh clone's files: what git tracks), runs its RUN steps there with its
 * ENV and ARGs, and the last stage's CMD then serves requests. A build input the Containerfile
 * does not copy fails the build step here, as it would fail the image.
 *
 * What stands in for the base image, each mapping explicit:
 * - /usr/local (where the official Node images keep Node, npm and the headers) is the prefix of
 *   the Node running this test, so native code builds against local headers;
 * - RUN steps that set up the operating system (apt-get, groupadd/useradd) are not run: the host
 *   has the toolchain, and the image user is test/deploy/image.test.ts's concern;
 * - npm may answer from its local cache first (npm_config_prefer_offline): the same packages,
 *   fetched only when missing; a fetch that fails is not retried (npm_config_fetch_retries=0),
 *   so a step that asks the registry when it need not fails or goes on at once instead of
 *   waiting out npm's back-off for minutes;
 * - COPY --from=stage hard-links that stage's files instead of copying them;
 * - the server listens on 127.0.0.1 and a free port, its SQLite file in the stage's /data;
 * - a RUN step is taken from a layer cache (~/.cache/petstore/containerfile-layers, the stage's
 *   root as the step left it) when everything it depends on is exactly as when it was kept, as an
 *   image builder reuses a layer (test/deploy/image.test.ts builds with buildah --layers): the
 *   layer is keyed by its stage's instructions up to and including the step, the content of every
 *   file COPY brought into the stage before it, the resolved ARGs, the layer of each stage COPY
 *   --from took files from, the Node, npm and ~/.npmrc it ran with and the environment this test
 *   adds. So `npm ci` runs again when package.json, package-lock.json or
 *   packages/client/package.json change, and `npm run build` when any source, the commit or a
 *   COPY line does: a build input the Containerfile stops copying changes the key and fails the
 *   step as before. With the same key the step would do the same (the lock file pins every
 *   package by its integrity), so it is not run again: its commands ran, and passed, in the run
 *   that kept the layer, on the same inputs. What a hit leaves out is only what the key does not
 *   hold: the host's compilers (better-sqlite3 loads its prebuilt addon here, so none is used)
 *   and the registry's answers; the image test (npm run test:image) runs every step in buildah
 *   from its base image. These steps were the costliest in CPU of the whole suite, on a machine
 *   whose two cores the suite keeps busy. PETSTORE_CONTAINERFILE_CACHE=off runs every step and
 *   keeps nothing.
 */
const ROOT = join(DEPLOY_DIR, '..');
const NODE_PREFIX = dirname(dirname(process.execPath));
const OS_SETUP = /^(apt-get|groupadd|useradd)\b/;
const HEAD =
  spawnSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).stdout?.trim() ?? '';
/** What this test adds to every RUN step's environment (beside the run's mark). */
const RUN_ENV = { npm_config_prefer_offline: 'true', npm_config_fetch_retries: '0' };
const LAYERS = join(homedir(), '.cache', 'petstore', 'containerfile-layers');
const LAYER_CACHE = process.env.PETSTORE_CONTAINERFILE_CACHE !== 'off';
/** Far longer than a build of the stages takes. */
const LAYER_UNUSED_MS = 30 * 60_000;

const digest = (...parts: string[]) => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(`${part.length}:${part}`);
  return hash.digest('hex');
};

/** What the RUN steps run with beside the stage's own files: the stand-in base image. */
function toolchain(): string {
  const npm = spawnSync('npm', ['--version'], { encoding: 'utf8' });
  if (npm.status !== 0) throw new Error(`npm --version failed: ${npm.stderr}`);
  const npmrc = join(homedir(), '.npmrc');
  return JSON.stringify({
    node: process.version,
    prefix: NODE_PREFIX,
    npm: npm.stdout.trim(),
    npmrc: existsSync(npmrc) ? readFileSync(npmrc, 'utf8') : '',
    platform: `${process.platform}-${process.arch}`,
    env: RUN_ENV,
  });
}

/** Whether `layer` is kept; marks it used now, so that no other run removes it meanwhile. */
function used(layer: string): boolean {
  try {
    const now = new Date();
    utimesSync(layer, now, now);
    return true;
  } catch {
    return false;
  }
}

/** Keeps a stage's root as a layer; a failure to keep it only costs the next run the step. */
function keepLayer(root: string, layer: string, family: string): void {
  const kept = `${layer}.${process.pid}.tmp`;
  try {
    mkdirSync(LAYERS, { recursive: true });
    execFileSync('tar', ['-cf', kept, '-C', root, '.']);
    renameSync(kept, layer);
    // A step's other layers go once no run has used them for a while: a run of another commit
    // at the same time (another clone) may be about to unpack one.
    const unused = Date.now() - LAYER_UNUSED_MS;
    for (const name of readdirSync(LAYERS)) {
      const path = join(LAYERS, name);
      if (name.startsWith(family) && name !== basename(layer) && statSync(path).mtimeMs < unused) {
        rmSync(path, { force: true });
      }
    }
  } catch (error) {
    rmSync(kept, { force: true });
    console.warn(`containerfile inputs: layer ${layer} not kept: ${String(error)}`);
  }
}

/** The files a fresh clone holds, relative to the repository's root. */
function trackedFiles(): string[] {
  const listed = spawnSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' });
  if (listed.status !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`);
  // A file deleted in the working tree but not yet in git's index is not in a clone either.
  return listed.stdout.split('\0').filter((file) => file !== '' && existsSync(join(ROOT, file)));
}

/**
 * Where the stages are built: in memory (/dev/shm) when there is one. npm ci writes about 400 MB
 * of node_modules, which on a loaded machine took several times longer on disk than in memory.
 */
function scratch(): string {
  try {
    accessSync('/dev/shm', constants.W_OK);
    return '/dev/shm';
  } catch {
    return tmpdir();
  }
}

interface Built {
  /** Where each stage's root stands, by stage name. */
  readonly roots: Map<string, string>;
  readonly last: Stage;
  /** The last stage's ENV and WORKDIR, as the CMD starts with them. */
  readonly env: Record<string, string>;
  readonly workdir: string;
  /** Seconds each step took, for the log. */
  readonly steps: string[];
}

/** An ENV value with the base image's paths mapped to this machine's (see the header). */
function mapped(value: string, stageRoot: string): string {
  return value
    .replace(/(^|:)\/usr\/local\b/g, `$1${NODE_PREFIX}`)
    .replace(/(^|:)\/data\b/g, `$1${join(stageRoot, 'data')}`);
}

/** Runs every stage in order into `dir`; throws with the step's output when one fails. */
async function build(stages: readonly Stage[], dir: string): Promise<Built> {
  const roots = new Map<string, string>();
  /** Each stage's key after its last instruction: what COPY --from takes from it. */
  const stageKeys = new Map<string, string>();
  const tracked = trackedFiles();
  const base = toolchain();
  const steps: string[] = [];
  let env: Record<string, string> = {};
  let workdir = '/';
  for (const stage of stages) {
    const root = join(dir, stage.name);
    mkdirSync(root, { recursive: true });
    roots.set(stage.name, root);
    env = {};
    workdir = '/';
    let key = digest(base, stage.name);
    let runs = 0;
    /**
     * A layer taken from the cache is unpacked only when a step needs the stage's files (a RUN
     * not in the cache, the stage's end), with what the stage received since replayed on it: a
     * step after another taken from the cache is then unpacked alone.
     */
    let pending: { layer: string; since: (() => void)[] } | undefined;
    const later = (step: () => void) => (pending ? pending.since.push(step) : step());
    const unpack = () => {
      if (pending === undefined) return;
      const { layer, since } = pending;
      pending = undefined;
      rmSync(root, { recursive: true, force: true });
      mkdirSync(root, { recursive: true });
      execFileSync('tar', ['-xf', layer, '-C', root]);
      for (const step of since) step();
    };
    const inStageAt = (at: string) => (path: string) =>
      join(root, path.startsWith('/') ? path : join(at, path));
    for (const instruction of stage.instructions) {
      key = digest(key, JSON.stringify(instruction));
      await apply(instruction);
    }
    unpack();
    stageKeys.set(stage.name, key);

    async function apply(instruction: Instruction): Promise<void> {
      const inStage = inStageAt(workdir);
      switch (instruction.kind) {
        case 'WORKDIR': {
          workdir = instruction.path;
          const path = inStageAt(workdir)('.');
          later(() => mkdirSync(path, { recursive: true }));
          return;
        }
        case 'ENV':
          for (const [name, value] of Object.entries(instruction.values)) {
            env[name] = mapped(value, root);
          }
          return;
        case 'ARG': {
          const value = instruction.name === 'PETSTORE_COMMIT' ? HEAD : (instruction.value ?? '');
          env[instruction.name] = value;
          key = digest(key, value);
          return;
        }
        case 'COPY': {
          const started = Date.now();
          key = digest(key, copied(instruction));
          later(() => copy(instruction, inStage));
          const seconds = ((Date.now() - started) / 1000).toFixed(1);
          steps.push(`${seconds} s  COPY ${instruction.sources.join(' ')}`);
          return;
        }
        case 'RUN': {
          if (OS_SETUP.test(instruction.command)) return;
          const started = Date.now();
          runs += 1;
          const family = `${stage.name}-${runs}-`;
          const layer = join(LAYERS, `${family}${key}.tar`);
          const seconds = () => ((Date.now() - started) / 1000).toFixed(1);
          if (LAYER_CACHE && used(layer)) {
            pending = { layer, since: [] };
            steps.push(`${seconds()} s  RUN ${instruction.command.slice(0, 60)} (layer cache)`);
            return;
          }
          unpack();
          await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', instruction.command], {
            cwd: inStage('.'),
            env: {
              PATH: process.env.PATH ?? '',
              HOME: process.env.HOME ?? '',
              ...RUN_ENV,
              ...testRunEnv(),
              ...env,
            },
            maxBuffer: 64 * 1024 * 1024,
          }).catch((error: unknown) => {
            const failed = error as { stdout?: string; stderr?: string };
            throw new Error(
              `RUN ${instruction.command} failed in stage ${stage.name}:\n${failed.stdout ?? ''}\n${failed.stderr ?? String(error)}`,
            );
          });
          if (LAYER_CACHE) keepLayer(root, layer, family);
          steps.push(`${seconds()} s  RUN ${instruction.command.slice(0, 60)}`);
          return;
        }
        default:
          return;
      }
    }
  }

  /** What a COPY brings into its stage, for the key: each file by content, or the stage's key. */
  function copied(instruction: Extract<Instruction, { kind: 'COPY' }>): string {
    const { from, sources } = instruction;
    if (from !== undefined) return stageKeys.get(from) ?? '';
    return sources
      .flatMap((source) => {
        const name = source.replace(/\/$/, '');
        return tracked.filter((file) => file === name || file.startsWith(`${name}/`));
      })
      .map((file) => {
        const content = createHash('sha256').update(readFileSync(join(ROOT, file)));
        return `${file}\0${content.digest('hex')}`;
      })
      .join('\0');
  }

  function copy(
    instruction: Extract<Instruction, { kind: 'COPY' }>,
    inStage: (p: string) => string,
  ) {
    const { from, sources, destination } = instruction;
    const toDirectory = destination.endsWith('/') || sources.length > 1;
    for (const source of sources) {
      if (from !== undefined) {
        const fromRoot = roots.get(from);
        if (fromRoot === undefined) throw new Error(`COPY --from=${from}: no such stage`);
        const path = join(fromRoot, source);
        if (!existsSync(path)) throw new Error(`COPY --from=${from} ${source}: not there`);
        const target = toDirectory
          ? join(inStage(destination), source.split('/').at(-1) ?? '')
          : inStage(destination);
        // Hard links: the build stage's files are not written a second time (copying its
        // node_modules file by file was the slowest step after npm ci).
        mkdirSync(dirname(target), { recursive: true });
        execFileSync('cp', ['-al', '--', path, target]);
        continue;
      }
      const name = source.replace(/\/$/, '');
      const files = tracked.filter((file) => file === name || file.startsWith(`${name}/`));
      if (files.length === 0) throw new Error(`COPY ${source}: no such file in the repository`);
      for (const file of files) {
        const relative =
          file === name ? (name.split('/').at(-1) ?? name) : file.slice(name.length + 1);
        const target =
          file === name && !toDirectory
            ? inStage(destination)
            : join(inStage(destination), relative);
        mkdirSync(dirname(target), { recursive: true });
        cpSync(join(ROOT, file), target);
      }
    }
  }

  const last = stages.at(-1);
  if (last === undefined) throw new Error('no stage');
  const lastRoot = roots.get(last.name) ?? '';
  mkdirSync(join(lastRoot, 'data'), { recursive: true });
  return { roots, last, env, workdir: join(lastRoot, workdir), steps };
}

function commandOf(stage: Stage, kind: 'CMD' | 'HEALTHCHECK'): string[] {
  const found = stage.instructions.find((i) => i.kind === kind);
  if (found === undefined || !('command' in found) || typeof found.command === 'string') {
    throw new Error(`the last stage has no ${kind}`);
  }
  return found.command;
}

describe('deploy/Containerfile: exactly what it copies builds and serves', () => {
  const dir = mkdtempSync(join(scratch(), 'petstore-containerfile-'));
  let built: Built;
  let server: ChildProcess | undefined;
  let output = '';
  let port = 0;
  const killOnExit = () => server?.kill('SIGKILL');

  beforeAll(async () => {
    const started = Date.now();
    built = await build(parseContainerfile(), dir);
    console.log(
      `containerfile inputs built in ${((Date.now() - started) / 1000).toFixed(1)} s:\n  ${built.steps.join('\n  ')}`,
    );
    port = await freePort();
    const [program = '', ...args] = commandOf(built.last, 'CMD');
    process.once('exit', killOnExit);
    server = spawn(program, args, {
      cwd: built.workdir,
      env: {
        PATH: process.env.PATH ?? '',
        ...testRunEnv(),
        ...built.env,
        HOST: '127.0.0.1',
        PORT: String(port),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    server.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    server.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await eventually(
      'the CMD answers /healthz',
      async () => {
        if (server?.exitCode !== null) throw new Error(`the CMD exited:\n${output}`);
        return (await fetch(`http://127.0.0.1:${port}/healthz`)).ok;
      },
      60_000,
      100,
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}\n${output}`);
    });
  }, 600_000);

  afterAll(() => {
    server?.kill('SIGKILL');
    process.off('exit', killOnExit);
    rmSync(dir, { recursive: true, force: true });
  });

  it('holds only what the last stage copies: the build output and production dependencies', () => {
    const app = built.workdir;
    expect(existsSync(join(app, 'dist', 'main.js'))).toBe(true);
    expect(existsSync(join(app, 'src'))).toBe(false);
    // npm prune --omit=dev ran: no compiler in the image.
    expect(existsSync(join(app, 'node_modules', 'typescript'))).toBe(false);
    expect(statSync(join(app, 'node_modules', 'better-sqlite3')).isDirectory()).toBe(true);
  });

  it('serves: ready on its SQLite file, the API refusing a request without a key, the commit it was built from', async () => {
    const base = `http://127.0.0.1:${port}`;
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    const refused = await fetch(`${base}/v1/pets?limit=1`);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { code: string }).code).toBe('unauthorized');
    expect(output).toContain(`"commit":"${HEAD}"`);
    expect(existsSync(join(built.roots.get(built.last.name) ?? '', 'data', 'petstore.db'))).toBe(
      true,
    );
  });

  it("passes the image's HEALTHCHECK", () => {
    const [program = '', ...args] = commandOf(built.last, 'HEALTHCHECK');
    const check = spawnSync(program, args, {
      cwd: built.workdir,
      env: { PATH: process.env.PATH ?? '', ...testRunEnv(), ...built.env, PORT: String(port) },
      encoding: 'utf8',
      timeout: 10_000,
    });
    expect(check.status, check.stderr).toBe(0);
  });
});

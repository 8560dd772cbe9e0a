import { readdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join, relative } from 'node:path';
import { defineConfig, type ViteUserConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Whether something listens on 127.0.0.1:port (PostgreSQL, Redis), asked once per run. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const done = (answer: boolean) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * The test/http files that start a server (they import a helper from test/helpers/): the ones a
 * second backend can change. The others test a parser or compiler alone, and would only repeat
 * the same run; so would a file whose server never reads the database or Redis for what it
 * checks, which says so in a line starting `// One backend only:` with the reason.
 */
function serverSuites(dir = 'test/http'): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.test.ts'))
    .map((name) => join(dir, name))
    .filter((path) => {
      const text = readFileSync(path, 'utf8');
      return /from '(\.\.\/)+helpers\//.test(text) && !/^\/\/ One backend only:/m.test(text);
    });
}

/**
 * Files that start server processes, a cluster, Spectral or an install: in a fresh clone (no
 * durations from an earlier run yet) they are started first.
 */
const KNOWN_LONG = [
  /^test\/process\//,
  /^test\/contract\//,
  /^test\/cli\/(check|binary|backup)\.test\.ts$/,
  /^test\/storage\/(postgres-storage|redis-cluster-stores|redis-rate-limit-leases)\.test\.ts$/,
  /^test\/deploy\/(observability\.scrape|containerfile-inputs|compose-processes)\.test\.ts$/,
  /^test\/telemetry\/tracing\.test\.ts$/,
  /^test\/http\/(fuzz\.property|rate-limits\.plans)\.test\.ts$/,
];

/**
 * The embedded project's files, then the PostgreSQL + Redis project's, each longest first: a long
 * file started last is the tail of the run. By the durations of the last run (vitest's cache) when
 * it has them all; in a fresh clone, the files known to be long first, then larger files first.
 * One project after the other because vitest keeps a worker (and the modules it has loaded) for
 * the next file only when that file is of the same project: interleaved, the two projects made it
 * start 49 workers a run, each loading the app again; grouped, 8. The second project's files are
 * all short (at most 7 s), so they fill the end of the run.
 */
export class LongestFirst extends BaseSequencer {
  override sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const key = (file: TestSpecification) =>
      `${file.project.name}:${relative(root, file.moduleId)}`;
    const durations = files.map((file) => this.ctx.cache.getFileTestResults(key(file))?.duration);
    const cost = (file: TestSpecification, index: number): number => {
      const duration = durations[index];
      if (durations.every((known) => known !== undefined)) return duration ?? 0;
      const path = relative(root, file.moduleId);
      const size = this.ctx.cache.getFileStats(key(file))?.size ?? 0;
      return (KNOWN_LONG.some((pattern) => pattern.test(path)) ? 1e9 : 0) + size;
    };
    const costs = new Map(files.map((file, index) => [file, cost(file, index)]));
    const group = (file: TestSpecification) => (file.project.name === 'embedded' ? 0 : 1);
    return Promise.resolve(
      [...files].sort((a, b) => group(a) - group(b) || (costs.get(b) ?? 0) - (costs.get(a) ?? 0)),
    );
  }
}

/**
 * Every test runs on the embedded backends. The HTTP behaviour suites run a second time on
 * PostgreSQL + Redis (test/helpers/test-server.ts reads PETSTORE_TEST_BACKEND), when both answer;
 * in CI (CI=true) always, so that a missing server fails the run instead of skipping it.
 */
export const config = defineConfig(async (): Promise<ViteUserConfig> => {
  const shared = process.env.CI === 'true' || ((await listening(5432)) && (await listening(6379)));
  if (!shared) {
    console.warn(
      'skipping the HTTP suites on PostgreSQL + Redis: nothing answers on 127.0.0.1:5432 and :6379',
    );
  }
  return {
    test: {
      // Deadlines for a machine shared with other runs (load 3-7 on 2 cores stretches a server's
      // start or a property test several times over, and a machine whose system calls are slow
      // runs the whole suite at load 10): a test that waits for an event fails at its own
      // deadline, and a passing run never waits for these. Tests and hooks set no shorter bound
      // of their own: a bound tighter than these only failed runs on slower machines.
      testTimeout: 120_000,
      hookTimeout: 120_000,
      pool: 'forks',
      // Kills, at the end of the run, any process a test started and left running.
      globalSetup: ['test/global-setup.ts'],
      // Most files wait (on server processes, PostgreSQL, Redis, timers) far more than they
      // compute: alone, the longest use 2 to 12 s of CPU in 15 to 60 s. 6 at a time keep the 2
      // cores of this machine busy where 4 left them partly idle (vitest's default, one fewer
      // than the cores, would run every file in turn). Files share
      // a worker's modules (isolate: false): importing Fastify and the app again for each of 200
      // files cost more than a third of the run; each file builds its own app, registry and
      // storage, restores what it stubs, and none keeps module state another file reads.
      maxWorkers: 6,
      isolate: false,
      sequence: { sequencer: LongestFirst },
      experimental: {
        fsModuleCache: true,
        // In the clone: runs of two clones at once (CI beside a developer's run) never share it.
        fsModuleCachePath: join(import.meta.dirname, 'node_modules', '.vitest-modules'),
      },
      projects: [
        { extends: true, test: { name: 'embedded', include: ['test/**/*.test.ts'] } },
        ...(shared
          ? [
              {
                extends: true as const,
                test: {
                  name: 'postgres+redis',
                  include: serverSuites(),
                  env: { PETSTORE_TEST_BACKEND: 'postgres' },
                },
              },
            ]
          : []),
      ],
    },
  };
});

// vitest discovers its config by its default export.
export default config;

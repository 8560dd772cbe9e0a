import { readdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { defineConfig, type ViteUserConfig } from 'vitest/config';

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
 * the same run.
 */
function serverSuites(dir = 'test/http'): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.test.ts'))
    .map((name) => join(dir, name))
    .filter((path) => /from '(\.\.\/)+helpers\//.test(readFileSync(path, 'utf8')));
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
      testTimeout: 20_000,
      hookTimeout: 30_000,
      pool: 'forks',
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

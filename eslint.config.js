// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'release/**',
      'packages/*/dist/**',
      'packages/*/src/generated/**',
      'console/src/generated/**',
      'build/**',
      'node_modules/**',
      'coverage/**',
      'data/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // Tool configuration files are found by their default export; the rule is for our code.
    files: [
      'src/**/*.ts',
      'test/**/*.ts',
      'bench/**/*.ts',
      'packages/*/src/**/*.ts',
      'console/src/**/*.ts',
    ],
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      'no-restricted-syntax': [
        'error',
        { selector: 'ExportDefaultDeclaration', message: 'Use named exports.' },
      ],
    },
  },
  {
    files: ['src/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                'fastify',
                '@fastify/*',
                'kysely',
                'better-sqlite3',
                'pg',
                'ioredis',
                '@opentelemetry/*',
              ],
              message: 'domain/ stays free of frameworks, storage and telemetry.',
            },
            {
              group: ['**/http/**', '**/storage/**', '**/cli/**'],
              message: 'Dependencies point inward toward domain/.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/http/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/storage/**', '**/services.js', '**/cli/**'],
              message:
                'http/ receives its services (src/services.ts builds them); it never opens storage.',
            },
          ],
        },
      ],
    },
  },
  {
    // What an answer is stays free of Fastify, so the fast path and the routes share it.
    files: ['src/http/answers/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['fastify', 'fastify-plugin', '@fastify/*'],
              message: 'http/answers/ is free of Fastify: both writers of an answer use it.',
            },
            {
              group: ['**/apps/**', '**/plugins/**', '**/fast-path/**'],
              message: 'http/answers/ is below the apps and the fast path; they import it.',
            },
            {
              group: ['**/storage/**', '**/services.js', '**/cli/**'],
              message:
                'http/ receives its services (src/services.ts builds them); it never opens storage.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/http/server/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/apps/**', '**/plugins/**', '**/fast-path/**'],
              message: 'http/server/ is under every app: it knows no app, plugin or fast path.',
            },
            {
              group: ['**/storage/**', '**/services.js', '**/cli/**'],
              message:
                'http/ receives its services (src/services.ts builds them); it never opens storage.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/cli/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/http/**', '**/storage/**'],
              message: 'cli/ works through src/services.ts, like the server.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/storage/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/http/**', '**/cli/**', '**/services.js'],
              message: 'storage/ implements domain ports and knows nothing above them.',
            },
            {
              group: ['@opentelemetry/*', '**/telemetry/tracing*'],
              message: 'storage/ is traced from outside: src/services.ts decorates its ports.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/telemetry/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/http/**', '**/storage/**', '**/cli/**', '**/services.js'],
              message:
                'telemetry/ is told what to observe (src/services.ts wires it); it never reaches into the layers it observes.',
            },
          ],
        },
      ],
    },
  },
  {
    // The bench is built by tsconfig.bench.json (src and bench only) and runs without a test runner.
    files: ['bench/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['vitest', 'vitest/*', '**/test/**'],
              message:
                'bench/ runs without vitest; what a test and the bench share lives in bench/ (the tests run it from there).',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/config/**'],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'Only config/ reads process.env.' },
      ],
    },
  },
);

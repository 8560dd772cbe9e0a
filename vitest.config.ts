import { defineConfig } from 'vitest/config';

export const config = defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});

// vitest discovers its config by its default export.
export default config;

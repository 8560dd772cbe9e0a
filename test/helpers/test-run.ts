/**
 * The mark of this test run, for a child whose environment is built from scratch: every process a
 * test starts must carry it, so the run's end can kill what a test left behind
 * (test/global-setup.ts).
 */
export function testRunEnv(): Record<string, string> {
  const mark = process.env.PETSTORE_TEST_RUN;
  return mark ? { PETSTORE_TEST_RUN: mark } : {};
}

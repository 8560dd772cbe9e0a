import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { call, TEST_BACKEND, useServer } from '../helpers/test-server.js';

/**
 * A bound on the work each request does, not on its time (benchmarks measure time; see bench/):
 * after warm-up no request prepares a statement, a cached body reads no storage, and each
 * operation runs a fixed, small number of SQL statements.
 */
const prepared: string[] = [];
const executed: string[] = [];
const TRANSACTION_CONTROL = /^(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)\b/i;
/** Once a second whatever the traffic, not per request: the store generation's read. */
const BACKGROUND = /store_generation|^PRAGMA schema_version$/;

beforeAll(() => {
  const probe = new BetterSqlite3(':memory:');
  const statementPrototype = Object.getPrototypeOf(probe.prepare('select 1')) as Record<
    'run' | 'get' | 'all',
    (...args: unknown[]) => unknown
  >;
  probe.close();
  const prepare = BetterSqlite3.prototype.prepare;
  vi.spyOn(BetterSqlite3.prototype, 'prepare').mockImplementation(function (
    this: BetterSqlite3.Database,
    source: string,
  ) {
    if (!BACKGROUND.test(source)) prepared.push(source);
    return prepare.call(this, source);
  });
  for (const method of ['run', 'get', 'all'] as const) {
    const original = statementPrototype[method];
    vi.spyOn(statementPrototype, method).mockImplementation(function (
      this: { source: string },
      ...args: unknown[]
    ) {
      if (!TRANSACTION_CONTROL.test(this.source) && !BACKGROUND.test(this.source)) {
        executed.push(this.source);
      }
      return original.apply(this, args);
    });
  }
});
afterAll(() => vi.restoreAllMocks());

/** What `send` prepares and runs in SQL, a request at a time. */
async function workOf(send: () => Promise<{ status: number }>, expected: number) {
  prepared.length = 0;
  executed.length = 0;
  for (let i = 0; i < 10; i++) expect((await send()).status).toBe(expected);
  return { prepared: [...prepared], perRequest: executed.length / 10 };
}

// Counted on better-sqlite3's statements: the SQLite backend's own rule.
describe.runIf(TEST_BACKEND === 'sqlite')('work per request, after warm-up (SQLite)', () => {
  const server = useServer();
  let key = '';
  let petId = 0;
  const list = (query: string) => () => call(server(), 'GET', `/v1/pets?${query}`, { key });

  beforeAll(async () => {
    ({ key } = await server().createKey('business'));
    for (let i = 0; i < 25; i++) {
      const res = await call(server(), 'POST', '/v1/pets', {
        key,
        body: { name: `Counted ${i}`, categoryId: 1, status: 'sold' },
      });
      petId = (res.body as { id: number }).id;
    }
    // Warm-up: every kind of request once, so that every statement exists.
    await list('limit=5')();
    await list('limit=100')();
    await call(server(), 'GET', `/v1/pets/${petId}`, { key });
    await call(server(), 'POST', '/v1/pets', {
      key,
      body: { name: 'Warm', categoryId: 1 },
      headers: { 'idempotency-key': 'warm-up' },
    });
  });

  it('serves a full page again without preparing or running any statement', async () => {
    expect(await workOf(list('limit=5'), 200)).toEqual({ prepared: [], perRequest: 0 });
  });

  it('runs exactly one prepared statement for a last page, which may still grow', async () => {
    expect(await workOf(list('limit=100'), 200)).toEqual({ prepared: [], perRequest: 1 });
  });

  it('serves a pet again without preparing or running any statement', async () => {
    const get = () => call(server(), 'GET', `/v1/pets/${petId}`, { key });
    expect(await workOf(get, 200)).toEqual({ prepared: [], perRequest: 0 });
  });

  it('runs one INSERT per create, and three statements per create with an Idempotency-Key', async () => {
    let n = 0;
    const create = (idempotent: boolean) => () =>
      call(server(), 'POST', '/v1/pets', {
        key,
        body: { name: `Work ${n++}`, categoryId: 1 },
        ...(idempotent ? { headers: { 'idempotency-key': `work-${n}` } } : {}),
      });
    expect(await workOf(create(false), 201)).toEqual({ prepared: [], perRequest: 1 });
    expect(await workOf(create(true), 201)).toEqual({ prepared: [], perRequest: 3 });
  });
});

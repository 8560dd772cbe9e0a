/**
 * npm run bench:pg-page: what an uncached page costs on PostgreSQL, without HTTP or Redis around
 * it: the client's CPU (this process) and the server's (its backend, from /proc) per query, for the
 * page as the store runs it (PostgresPetStore: compiled once, a named prepared statement per page
 * size, the generic plan) against the same SQL built by Kysely and sent unnamed on every call, as
 * the store did before. One connection, one query at a time; the first page of a status past the
 * newest pets and a tail page of all pets, alternately. See bench/README.md, "Findings".
 */
import { sql } from 'kysely';
import { openPostgres } from '../src/storage/postgres/postgres-connection.js';
import { PostgresPetStore } from '../src/storage/postgres/postgres-pet-store.js';
import { petQueries } from '../src/storage/sql/pet-queries.js';
import { toPet } from '../src/storage/sql/pet-rows.js';
import { ownTicks, TICKS_PER_SECOND } from './proc.js';
import { postgresStorage, seedPets } from './servers.js';

const PETS = 10_000;
const QUERIES = Number(process.env.BENCH_PG_PAGE_QUERIES ?? 3_000);
const ROUNDS = 3;
const progress = (text: string) => process.stderr.write(`bench:pg-page: ${text}\n`);

async function main(): Promise<void> {
  const storage = await postgresStorage();
  try {
    await seedPets(PETS, storage.env, progress);
    await storage.quiesce();
    const url = storage.env.DATABASE_URL as string;
    const { db } = openPostgres({
      kind: 'postgres',
      url,
      poolMax: 1,
      statementTimeoutMs: 5_000,
      connectTimeoutMs: 3_000,
    });
    try {
      const { rows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(db);
      const backend = (rows[0] as { pid: number }).pid;
      const store = new PostgresPetStore(db, () => 0, 1);
      const pages = [
        { afterId: PETS - 50, limit: 21 },
        { afterId: PETS - 60, limit: 21, status: 'sold' as const },
      ];
      const ways = {
        'built per call, unnamed': async (page: (typeof pages)[number]) =>
          (
            await (
              page.status === undefined
                ? petQueries.listAll(db, page)
                : petQueries.listByStatusAsIndexRange(db, { ...page, status: page.status })
            ).execute()
          ).map(toPet),
        'prepared (the store)': (page: (typeof pages)[number]) => store.list(page),
      };
      const us = (ticks: number) => ((ticks / TICKS_PER_SECOND) * 1e6) / QUERIES;
      for (let round = 1; round <= ROUNDS; round++) {
        for (const [way, run] of Object.entries(ways)) {
          for (let i = 0; i < 200; i++) await run(pages[i % 2] as (typeof pages)[number]);
          const client = process.cpuUsage();
          const server = ownTicks(backend);
          for (let i = 0; i < QUERIES; i++) await run(pages[i % 2] as (typeof pages)[number]);
          const used = process.cpuUsage(client);
          process.stdout.write(
            `round ${round} ${way.padEnd(24)} client ${((used.user + used.system) / QUERIES).toFixed(0)} µs, ` +
              `PostgreSQL ${us(ownTicks(backend) - server).toFixed(0)} µs per page\n`,
          );
        }
      }
    } finally {
      await db.destroy();
    }
  } finally {
    await storage.drop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:pg-page: ${String(error)}\n`);
  process.exit(1);
});

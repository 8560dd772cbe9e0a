import { type Command, parseCommandArgs } from '../command.js';
import { describeDatabase } from '../describe.js';

export const cacheReset: Command = {
  name: 'cache-reset',
  summary: 'make every running server drop what it keeps in memory (run after a restore)',
  help: [
    'Usage: petstore cache-reset',
    '',
    'Starts a new store generation in the DATABASE_URL database. Every server using it reads the',
    'generation about once a second and, seeing a new one, drops every pet, page and API key it',
    'keeps in memory and reads them again from the database.',
    '',
    'Run it after restoring a backup or changing data by hand under running servers',
    '(docs/caching.md). A restore of a pg_dump with --clean, or a point-in-time recovery, is noticed',
    'without it; a restore of data only into the existing tables is not.',
  ].join('\n'),
  migrateOnOpen: true,
  needsExistingDatabase: true,
  prepare(args) {
    parseCommandArgs(args, {});
    return async ({ services, stderr }) => {
      await services.storage.generation.bump();
      stderr.write(
        `Started a new store generation in ${describeDatabase(services.config.database)}; ` +
          'running servers invalidate their caches within a few seconds.\n',
      );
    };
  },
};

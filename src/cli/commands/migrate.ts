import { type Command, parseCommandArgs } from '../command.js';
import { describeDatabase } from '../describe.js';
import { checkDatabaseEnvironment } from '../../services.js';

export const migrate: Command = {
  name: 'migrate',
  summary: 'apply pending database migrations (the server also does on start)',
  help: [
    'Usage: petstore migrate',
    '',
    'Applies every pending schema migration to the DATABASE_URL database and lists them.',
    'Safe to run again: an up-to-date database is left as it is.',
  ].join('\n'),
  migrateOnOpen: false,
  prepare(args) {
    parseCommandArgs(args, {});
    return async ({ services, stderr }) => {
      // Checked, never claimed: a migration run without PETSTORE_ENV must not make a staging
      // database production's; the first server or key command records the environment.
      await checkDatabaseEnvironment(services.storage, services.config.environment, {
        claim: false,
      });
      const applied = await services.storage.migrate();
      const where = describeDatabase(services.config.database);
      if (applied.length === 0) {
        stderr.write(`${where} is up to date; no migration to apply.\n`);
        return;
      }
      stderr.write(`${where}:\n${applied.map((line) => `  ${line}\n`).join('')}`);
      stderr.write(`${applied.length} migration(s) applied.\n`);
    };
  },
};

import { type Command, parseCommandArgs } from '../command.js';
import { describeDatabase } from '../describe.js';

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

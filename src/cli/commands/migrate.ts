import { type Command, CommandError, parseCommandArgs } from '../command.js';
import { describeDatabase } from '../describe.js';

export const migrate: Command = {
  name: 'migrate',
  summary: 'apply pending database migrations (the server also does on start)',
  help: [
    'Usage: petstore migrate [--status]',
    '',
    'Applies every pending schema migration to the DATABASE_URL database and lists them.',
    'Safe to run again: an up-to-date database is left as it is.',
    '',
    '  --status   list the applied and pending migrations, applying nothing',
  ].join('\n'),
  migrateOnOpen: false,
  prepare(args) {
    const { values } = parseCommandArgs(args, { status: { type: 'boolean', default: false } });
    if (values.status === true) {
      return async ({ services, stdout }) => {
        const status = await services.storage.migrationStatus?.();
        if (status === undefined) throw new CommandError('this database cannot list migrations');
        const where = describeDatabase(services.config.database);
        const lines = [
          `${where}:`,
          ...status.applied.map((name) => `  applied  ${name}`),
          ...status.newer.map((name) => `  applied  ${name} (a later release's)`),
          ...status.pending.map((name) => `  pending  ${name}`),
          status.pending.length === 0
            ? 'Up to date; no migration to apply.'
            : `${status.pending.length} migration(s) pending; petstore migrate applies them (the server also does on start).`,
        ];
        stdout.write(`${lines.join('\n')}\n`);
      };
    }
    return async ({ services, stderr }) => {
      // Checked, never claimed: a migration run without PETSTORE_ENV must not make a staging
      // database production's; the first server or key command records the environment.
      // (services.js is loaded by now: the services were built from it.)
      const { checkDatabaseEnvironment } = await import('../../services.js');
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

import { type Command, keyIdArgument, parseCommandArgs, positiveInteger } from '../command.js';

export const keysUsage: Command = {
  name: 'keys usage',
  summary: "a key's requests per UTC day, admitted and refused",
  help: [
    'Usage: petstore keys usage <keyId> [--days N]',
    '',
    'Options:',
    '  --days N   the last N days, today included (default 30, at most the retention, 90)',
    '',
    'One line per day, oldest first: day  admitted  refused. Servers count in memory and write',
    'the counts every PETSTORE_USAGE_FLUSH_MS (default 60000) and when they stop, so the last',
    "minute's requests may not show yet. Days older than PETSTORE_USAGE_RETENTION_DAYS go.",
  ].join('\n'),
  migrateOnOpen: true,
  prepare(args) {
    const { values, positionals } = parseCommandArgs(
      args,
      { days: { type: 'string', default: '30' }, json: { type: 'boolean', default: false } },
      true,
    );
    const id = keyIdArgument(positionals);
    const days = positiveInteger('--days', values.days, 3_650);
    return async ({ services, stdout }) => {
      const usage = await services.keys.usage(id, days);
      if (values.json) {
        stdout.write(`${JSON.stringify(usage)}\n`);
        return;
      }
      stdout.write('day         admitted  refused\n');
      for (const day of usage) {
        stdout.write(
          `${day.day}  ${String(day.admitted).padStart(8)}  ${String(day.refused).padStart(7)}\n`,
        );
      }
    };
  },
};

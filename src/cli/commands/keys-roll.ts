import { type Command, keyIdArgument, parseCommandArgs } from '../command.js';
import { cliActor, duration } from '../key-options.js';

export const keysRoll: Command = {
  name: 'keys roll',
  summary: 'give a key a new secret, printed once; the old one works until the grace ends',
  help: [
    'Usage: petstore keys roll <keyId> [--grace DURATION]',
    '',
    'Options:',
    '  --grace DUR   how long the old secret keeps working: 24h (default), 30m, 90s, or 0',
    '',
    'Same key record: same id, plan, limits, counters and ban state; both secrets count against',
    'the same windows. After the grace the old secret gets 401 api_key_expired.',
    'The new secret goes to stdout, alone on the last line; it cannot be shown again.',
  ].join('\n'),
  migrateOnOpen: true,
  prepare(args) {
    const { values, positionals } = parseCommandArgs(
      args,
      { grace: { type: 'string', default: '24h' } },
      true,
    );
    const id = keyIdArgument(positionals);
    const graceMs = duration('--grace', values.grace, true);
    return async ({ services, stdout, stderr }) => {
      const { key, secret } = await services.keys.roll(id, { graceMs }, cliActor());
      stderr.write(
        [
          `Rolled ${key.id}: the old secret works until ${key.previousSecretExpiresAt ?? 'now (no grace)'}.`,
          'This is the only time the new secret is shown (it is the last line of stdout).',
          '',
        ].join('\n'),
      );
      stdout.write(`${secret}\n`);
    };
  },
};

import { type Command, CommandError, keyIdArgument } from '../command.js';

export const keysUnban: Command = {
  name: 'keys unban',
  summary: 'lift a rate-limit ban on a key before it ends',
  help: [
    'Usage: petstore keys unban <keyId>',
    '',
    'The key id is the first column of `petstore keys list` (key_...), not the key itself.',
    'A key with no ban is left as it is.',
  ].join('\n'),
  migrateOnOpen: true,
  prepare(args) {
    const id = keyIdArgument(args);
    return async (context) => {
      if (!(await context.services.apiKeys.unban(id))) {
        throw new CommandError(
          `no API key has the id ${JSON.stringify(id)} (see petstore keys list)`,
        );
      }
      context.stderr.write(
        `Lifted any ban on ${id}; running servers accept it again within 5 seconds.\n`,
      );
    };
  },
};

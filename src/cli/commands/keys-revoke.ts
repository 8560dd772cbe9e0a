import { type Command, CommandError, keyIdArgument } from '../command.js';

export const keysRevoke: Command = {
  name: 'keys revoke',
  summary: 'revoke a key for good; running servers refuse it within 5 seconds',
  help: [
    'Usage: petstore keys revoke <keyId>',
    '',
    'The key id is the first column of `petstore keys list` (key_...), not the key itself.',
    'Revoking cannot be undone; revoking twice keeps the first time.',
  ].join('\n'),
  migrateOnOpen: true,
  prepare(args) {
    const id = keyIdArgument(args);
    return async (context) => {
      if (!(await context.services.apiKeys.revoke(id))) {
        throw new CommandError(
          `no API key has the id ${JSON.stringify(id)} (see petstore keys list)`,
        );
      }
      context.stderr.write(`Revoked ${id}. Running servers stop accepting it within 5 seconds.\n`);
    };
  },
};

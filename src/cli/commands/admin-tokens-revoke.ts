import {
  type Command,
  CommandError,
  notASecret,
  parseCommandArgs,
  UsageError,
} from '../command.js';

export const adminTokensRevoke: Command = {
  name: 'admin-tokens revoke',
  summary: 'revoke an admin token for good; running servers refuse it within 5 seconds',
  help: [
    'Usage: petstore admin-tokens revoke <tokenId>',
    '',
    'Revoking cannot be undone; revoking twice keeps the first time.',
  ].join('\n'),
  migrateOnOpen: true,
  prepare(args) {
    const { positionals } = parseCommandArgs(args, {}, true);
    const [id, ...extra] = positionals;
    if (id === undefined || id === '') {
      throw new UsageError(
        'a token id is required (the adm_... column of petstore admin-tokens list)',
      );
    }
    if (extra.length > 0)
      throw new UsageError(`one token id at a time, please (got ${positionals.length})`);
    notASecret(id, 'token id', 'adm_... column of petstore admin-tokens list');
    return async (context) => {
      if (!(await context.services.admin.tokens.revoke(id))) {
        throw new CommandError(`no admin token has id ${id} (see petstore admin-tokens list)`);
      }
      context.stderr.write(`Revoked ${id}. Running servers stop accepting it within 5 seconds.\n`);
    };
  },
};

import { SCOPES } from '../../domain/api-keys/scopes.js';
import { type Command, parseCommandArgs, UsageError } from '../command.js';
import { cliActor, scopesOf } from '../key-options.js';

export const keysSetScopes: Command = {
  name: 'keys set-scopes',
  summary: 'change what a key may do (pets:read, pets:write) in place (same key, same secret)',
  help: [
    'Usage: petstore keys set-scopes <keyId> SCOPES',
    '',
    `SCOPES is a comma list of ${SCOPES.join(', ')}: pets:read lists and reads pets,`,
    'pets:write creates them. A request the key may not make gets 403 insufficient_scope and',
    'still counts against its limits. Running servers apply the change as fast as a plan change:',
    'within 1 second with Redis, 5 seconds without.',
  ].join('\n'),
  migrateOnOpen: true,
  prepare(args) {
    const { positionals } = parseCommandArgs(args, {}, true);
    const [id, list, ...extra] = positionals;
    if (id === undefined || id === '') {
      throw new UsageError('a key id is required (the key_... column of petstore keys list)');
    }
    if (list === undefined || extra.length > 0) {
      throw new UsageError(`give the key id, then one comma list of ${SCOPES.join(', ')}`);
    }
    const scopes = scopesOf('scopes', list);
    return async ({ services, stderr }) => {
      const key = await services.keys.setScopes(id, scopes, cliActor());
      stderr.write(
        `${key.id} now has scopes ${key.scopes.join(',')}; running servers apply it within 5 seconds.\n`,
      );
    };
  },
};

import type { KeyView } from '../../domain/api-keys/key-management-service.js';
import { keyIdCommand } from '../command.js';
import { cliActor } from '../key-options.js';

export const keysUnban = keyIdCommand({
  name: 'keys unban',
  summary: 'lift a rate-limit ban on a key before it ends',
  help: ['A key with no ban is left as it is.'],
  before: (services, id) => services.keys.get(id),
  act: (services, id) => services.keys.unban(id, cliActor()),
  done: (id, before) =>
    (before as KeyView | undefined)?.state === 'banned'
      ? `Lifted the ban on ${id}; running servers accept it again within 5 seconds.`
      : `${id} is not banned; nothing to lift.`,
});

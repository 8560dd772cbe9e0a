import { keyIdCommand } from '../command.js';
import { cliActor } from '../key-options.js';

export const keysUnban = keyIdCommand({
  name: 'keys unban',
  summary: 'lift a rate-limit ban on a key before it ends',
  help: ['A key with no ban is left as it is.'],
  act: (services, id) => services.keys.unban(id, cliActor()),
  done: (id) => `Lifted any ban on ${id}; running servers accept it again within 5 seconds.`,
});

import { keyIdCommand } from '../command.js';
import { cliActor } from '../key-options.js';

export const keysRevoke = keyIdCommand({
  name: 'keys revoke',
  summary: 'revoke a key for good; running servers refuse it within 5 seconds',
  help: ['Revoking cannot be undone; revoking twice keeps the first time.'],
  act: (services, id) => services.keys.revoke(id, cliActor()),
  done: (id) => `Revoked ${id}. Running servers stop accepting it within 5 seconds.`,
});

import { keyIdCommand } from '../command.js';

export const keysUnban = keyIdCommand({
  name: 'keys unban',
  summary: 'lift a rate-limit ban on a key before it ends',
  help: ['A key with no ban is left as it is.'],
  act: async (services, id) => {
    if (!(await services.apiKeys.unban(id))) return false;
    // With REDIS_URL the live ban is shared: lift it there at once. (Servers also lift it when
    // they see the key's unban time, within seconds.)
    await services.limiter.liftBan(id).catch(() => undefined);
    return true;
  },
  done: (id) => `Lifted any ban on ${id}; running servers accept it again within 5 seconds.`,
});

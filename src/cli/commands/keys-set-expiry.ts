import { type Command, notASecret, parseCommandArgs, UsageError } from '../command.js';
import { cliActor, isoOrNever, rfc3339 } from '../key-options.js';

export const keysSetExpiry: Command = {
  name: 'keys set-expiry',
  summary: 'set when a key expires (an RFC 3339 time), or never',
  help: [
    'Usage: petstore keys set-expiry <keyId> <TIME|never>',
    '',
    'TIME is RFC 3339 with its offset, e.g. 2027-01-31T12:00:00Z. From then on the key is',
    'refused with 401 api_key_expired, on every server within a second of that time. A time in',
    'the past expires the key at once; never takes the expiry away.',
  ].join('\n'),
  migrateOnOpen: true,
  prepare(args) {
    const { positionals } = parseCommandArgs(args, {}, true);
    const [id, when, ...extra] = positionals;
    if (id === undefined || id === '' || when === undefined || extra.length > 0) {
      throw new UsageError('expected a key id and a time (or never)');
    }
    notASecret(id, 'key id', 'key_... column of petstore keys list');
    const expiresAt = when === 'never' ? null : rfc3339('the time', when);
    return async ({ services, stderr }) => {
      const key = await services.keys.setExpiry(id, expiresAt, cliActor());
      stderr.write(`${key.id} expires: ${isoOrNever(key.expiresAt)} (state ${key.state}).\n`);
    };
  },
};

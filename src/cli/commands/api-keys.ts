import type { ApiKeyRecord } from '../../domain/api-keys/api-key.js';
import { ApiKeyService } from '../../domain/api-keys/api-key-service.js';
import { type CommandContext, parseCommandArgs, UsageError } from '../command.js';

export function apiKeyService(context: CommandContext): ApiKeyService {
  return new ApiKeyService(context.storage.apiKeys, context.clock, context.config.environment);
}

/** "free 60/min 1000/day"; a damaged enterprise row shows as such rather than failing the listing. */
export function describePlan(record: ApiKeyRecord): string {
  if (record.plan === 'enterprise' && record.customLimits === undefined) {
    return 'enterprise (no limits stored)';
  }
  const { perMinute, perDay } = ApiKeyService.limitsOf(record);
  return `${record.plan} ${perMinute}/min ${perDay}/day`;
}

/** The single <keyId> argument of `keys revoke` and `keys unban`. */
export function keyIdArgument(args: string[]): string {
  const { positionals } = parseCommandArgs(args, {}, true);
  const [id, ...extra] = positionals;
  if (id === undefined || id === '') {
    throw new UsageError('a key id is required (the key_... column of petstore keys list)');
  }
  if (extra.length > 0) {
    throw new UsageError(`one key id at a time, please (got ${positionals.length})`);
  }
  return id;
}

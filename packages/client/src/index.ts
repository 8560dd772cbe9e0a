export { PetClient, type PetClientOptions, type RetryOptions } from './client.js';
export {
  ApiKeyBannedError,
  InsufficientScopeError,
  PetApiError,
  PetClientError,
} from './errors.js';
export type { Quota, QuotaWindow } from './quota.js';
export type * from './types.js';

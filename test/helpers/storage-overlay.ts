import type {
  ApiKeyStore,
  IdempotencyStore,
  PetStore,
  Storage,
  StoreGeneration,
} from '../../src/domain/ports.js';

/**
 * An object that answers with `replace` where it has a member and with `target` otherwise.
 * Stores are class instances, so a spread would drop their prototype methods; this keeps them,
 * bound to the original.
 */
function overlay<T extends object>(target: T, replace: Partial<T>): T {
  return new Proxy(target, {
    get(object, property) {
      if (Object.hasOwn(replace, property)) return Reflect.get(replace, property);
      const value: unknown = Reflect.get(object, property, object);
      return typeof value === 'function' ? value.bind(object) : value;
    },
  });
}

export interface StoreReplacements {
  pets?: Partial<PetStore>;
  apiKeys?: Partial<ApiKeyStore>;
  idempotency?: Partial<IdempotencyStore>;
  generation?: Partial<StoreGeneration>;
}

/** Storage with a few store methods replaced (to count calls or make them fail); the rest is real. */
export function overlayStorage(storage: Storage, replace: StoreReplacements): Storage {
  return overlay(storage, {
    // A replaced list stands for listNow too: a page must not be read around it.
    pets: overlay(
      storage.pets,
      replace.pets?.list !== undefined && !Object.hasOwn(replace.pets, 'listNow')
        ? { listNow: undefined, ...replace.pets }
        : (replace.pets ?? {}),
    ),
    apiKeys: overlay(storage.apiKeys, replace.apiKeys ?? {}),
    idempotency: overlay(storage.idempotency, replace.idempotency ?? {}),
    generation: overlay(storage.generation, replace.generation ?? {}),
  });
}

import { domainErrors } from '../errors.js';

/**
 * What a key may do (Stripe's restricted keys, GitHub's fine-grained tokens): `pets:read` lists
 * and reads pets, `pets:write` creates them. A key made without scopes named has both, as has
 * every key made before scopes existed.
 */
export const SCOPES = ['pets:read', 'pets:write'] as const;
export type Scope = (typeof SCOPES)[number];

/** Every scope, in the order of SCOPES: a new key's, and every key's from before scopes. */
export const ALL_SCOPES: readonly Scope[] = Object.freeze([...SCOPES]);

/** The scope each operation of the API needs, by operationId. */
const REQUIRED_SCOPE: Readonly<Record<string, Scope>> = Object.freeze({
  listPets: 'pets:read',
  getPet: 'pets:read',
  createPet: 'pets:write',
});

/** The scope an operation needs; undefined for anything that is not an operation of the API. */
export function requiredScopeOf(operationId: string): Scope | undefined {
  return Object.hasOwn(REQUIRED_SCOPE, operationId) ? REQUIRED_SCOPE[operationId] : undefined;
}

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/**
 * Scopes as given (a list, or a comma list such as `pets:read,pets:write`), in SCOPES order
 * without repeats. Throws the domain error for an unknown scope or an empty list: a key that may
 * do nothing is a mistake, not a wish (revoke it instead).
 */
export function parseScopes(input: string | readonly string[]): Scope[] {
  const items = (typeof input === 'string' ? input.split(',') : input).map((item) => item.trim());
  const wanted = new Set<string>();
  for (const item of items) {
    if (item === '') continue;
    if (!isScope(item)) {
      throw domainErrors.invalidKeyField(
        'scopes',
        `each one of ${SCOPES.join(', ')} (got ${JSON.stringify(item)})`,
      );
    }
    wanted.add(item);
  }
  if (wanted.size === 0) {
    throw domainErrors.invalidKeyField('scopes', `at least one of ${SCOPES.join(', ')}`);
  }
  return SCOPES.filter((scope) => wanted.has(scope));
}

/** As storage keeps them: a comma list in SCOPES order. */
export function formatScopes(scopes: readonly Scope[]): string {
  return scopes.join(',');
}

/**
 * Scopes as storage gave them. An unknown entry is dropped rather than failing the key: a scope
 * written by a newer version grants nothing here.
 */
export function storedScopes(text: string | null | undefined): Scope[] {
  if (text === null || text === undefined) return [...ALL_SCOPES];
  const present = new Set(text.split(',').map((item) => item.trim()));
  return SCOPES.filter((scope) => present.has(scope));
}

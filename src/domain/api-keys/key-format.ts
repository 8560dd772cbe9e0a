import { hash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import type { KeyEnvironment } from './api-key.js';

/**
 * Key format, after GitHub's and Stripe's: `pa_live_` or `pa_test_`, 30 random base62 characters,
 * then a 6-character base62 CRC32 of everything before it. The checksum lets us refuse typos and
 * made-up keys without a storage lookup, and lets secret scanners find real keys with few false hits.
 */
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_LENGTH = 30;
const CHECKSUM_LENGTH = 6;
const DISPLAY_PREFIX_LENGTH = 12;

export const KEY_PREFIX: Readonly<Record<KeyEnvironment, string>> = Object.freeze({
  production: 'pa_live_',
  staging: 'pa_test_',
});

/** Published for secret scanners (README). */
export const API_KEY_PATTERN = /^pa_(live|test)_[0-9A-Za-z]{36}$/;
/** The length of every API key (both environments' prefixes have the same length). */
export const API_KEY_LENGTH = 'pa_live_'.length + RANDOM_LENGTH + CHECKSUM_LENGTH;
/** Admin tokens (the admin API's credential): the same format under their own prefix. */
export const ADMIN_TOKEN_PREFIX = 'pa_admin_';
export const ADMIN_TOKEN_PATTERN = /^pa_admin_[0-9A-Za-z]{36}$/;
/** Finds key- or admin-token-shaped text inside other text (logs must never carry one). */
export const API_KEY_SEARCH = /pa_(live|test|admin)_[0-9A-Za-z]{36}/g;

export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    // 248 = 4 * 62: rejecting bytes above it keeps every character equally likely.
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

function checksum(body: string): string {
  let n = crc32(body);
  let out = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

/** A new credential of the given kind: `prefix`, 30 random base62 characters, their checksum. */
export function generateToken(prefix: string): string {
  const body = prefix + randomBase62(RANDOM_LENGTH);
  return body + checksum(body);
}

const BASE62_TAIL = new RegExp(`^[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}$`);

/** True when the token is `prefix` followed by 36 base62 characters whose last 6 check the rest. */
export function isWellFormedToken(token: string, prefix: string): boolean {
  if (token.length !== prefix.length + RANDOM_LENGTH + CHECKSUM_LENGTH) return false;
  if (!token.startsWith(prefix) || !BASE62_TAIL.test(token.slice(prefix.length))) return false;
  const body = token.slice(0, -CHECKSUM_LENGTH);
  return checksum(body) === token.slice(-CHECKSUM_LENGTH);
}

export function generateApiKey(environment: KeyEnvironment): string {
  return generateToken(KEY_PREFIX[environment]);
}

/** True when the token has the shape, environment prefix and checksum of a key of this deployment. */
export function isWellFormedApiKey(token: string, environment: KeyEnvironment): boolean {
  return isWellFormedToken(token, KEY_PREFIX[environment]);
}

export function hashApiKey(token: string): string {
  // One call, no Hash object: it runs on every request with a key (the key caches are keyed by it).
  return hash('sha256', token, 'hex');
}

export function displayPrefix(token: string): string {
  return token.slice(0, DISPLAY_PREFIX_LENGTH);
}

export function newApiKeyId(): string {
  return 'key_' + randomBase62(16);
}

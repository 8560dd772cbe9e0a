/**
 * Passwords of DATABASE_URL and REDIS_URL kept out of every output: log lines, CLI output, error
 * messages that quote a URL. Two layers: a URL's password is masked wherever a URL is shown
 * (redactUrl), and the known passwords themselves are masked in any text (redactSecrets), which
 * also catches a library that quotes one on its own (ioredis's refused AUTH command, say).
 */

export const MASK = '***';

/**
 * `scheme://user:password@` (or `scheme://:password@`, or `scheme://password@` for Redis), also
 * mistyped (`postgres//`, no scheme at all at the start of the text).
 */
const USERINFO = /((?:[a-z][a-z0-9+.-]*:)?\/\/|^)([^\s/?#@"']*)@/gim;

/**
 * `password=...` in a query or a libpq keyword string, up to the next separator. Only password
 * names: a CLI that prints `TOKEN=...` for a person to copy must keep printing it.
 */
const SECRET_ASSIGNMENT = /\b(password|sslpassword|passwd|pwd)=([^\s&#"']*)/gi;

/**
 * The text with every URL's password masked, whether or not the URL parses (a mistyped one is
 * the one most likely to be quoted back): the user is kept, the password becomes ***.
 */
export function redactUrl(text: string): string {
  return text
    .replace(USERINFO, (_all, scheme: string, userinfo: string) => {
      const colon = userinfo.indexOf(':');
      // Redis accepts `redis://password@host`: without a colon the whole userinfo may be one.
      const user = colon === -1 ? '' : userinfo.slice(0, colon);
      if (colon === -1 && !/^rediss?:/i.test(scheme)) return `${scheme}${userinfo}@`;
      return `${scheme}${user}:${MASK}@`;
    })
    .replace(SECRET_ASSIGNMENT, (_all, name: string) => `${name}=${MASK}`);
}

/**
 * The passwords DATABASE_URL and REDIS_URL carry, as written and percent-decoded, for
 * redactSecrets. Read from the raw variables, so that they are known even when the configuration
 * does not load.
 */
export function urlSecrets(env: Readonly<Record<string, string | undefined>>): string[] {
  const secrets = new Set<string>();
  for (const name of ['DATABASE_URL', 'REDIS_URL']) {
    const raw = env[name]?.trim();
    if (raw === undefined || raw === '') continue;
    for (const match of raw.matchAll(USERINFO)) {
      const userinfo = match[2] ?? '';
      const colon = userinfo.indexOf(':');
      if (colon !== -1) addSecret(secrets, userinfo.slice(colon + 1));
      // `redis://password@host`: a user alone is no secret anywhere else.
      else if (/^rediss?:/i.test(match[1] ?? '')) addSecret(secrets, userinfo);
    }
    for (const match of raw.matchAll(SECRET_ASSIGNMENT)) addSecret(secrets, match[2] ?? '');
  }
  return [...secrets].sort((a, b) => b.length - a.length);
}

/** urlSecrets of this process's environment (config/ alone reads it). */
export function processUrlSecrets(): string[] {
  return urlSecrets(process.env);
}

function addSecret(secrets: Set<string>, value: string): void {
  // A one- or two-character "password" would mask half of every line; it protects nothing anyway.
  if (value.length < 3) return;
  secrets.add(value);
  try {
    const decoded = decodeURIComponent(value);
    if (decoded.length >= 3) secrets.add(decoded);
  } catch {
    // Not valid percent-encoding: the raw form is the one anything would quote.
  }
}

/** The text with each known secret, and every URL's password, masked. */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (out.includes(secret)) out = out.split(secret).join(MASK);
  }
  return out.includes('@') || out.includes('=') ? redactUrl(out) : out;
}

import type { Config } from './config/config.js';

/**
 * What a failed start prints: what failed, why (the causes Node and the drivers chain, and each
 * attempt of an AggregateError, whose own message is often empty), and what to do, for the
 * failures an operator meets first. Never a setting's value: URLs may hold passwords.
 */
export function describeStartFailure(error: unknown, config?: Config): string {
  const lines = [`petstore: failed to start: ${messageOf(error)}`];
  const seen = new Set<unknown>([error]);
  for (const reason of reasons(error)) {
    if (seen.has(reason)) continue;
    seen.add(reason);
    lines.push(`  because: ${messageOf(reason)}`);
  }
  const hint = hintFor([error, ...seen], config);
  if (hint !== undefined) lines.push(`  what to do: ${hint}`);
  return `${lines.join('\n')}\n`;
}

interface SystemError {
  code?: unknown;
  syscall?: unknown;
  address?: unknown;
  port?: unknown;
}

function messageOf(error: unknown): string {
  if (error instanceof AggregateError && error.message === '') {
    return error.errors.map(messageOf).join('; ') || 'AggregateError';
  }
  if (error instanceof Error) {
    const { code } = error as SystemError;
    const text = error.message === '' ? error.name : error.message;
    return typeof code === 'string' && !text.includes(code) ? `${text} (${code})` : text;
  }
  return String(error);
}

/** The causes and attempts behind an error, depth first. */
function reasons(error: unknown, depth = 0): unknown[] {
  if (depth > 5 || !(error instanceof Error)) return [];
  const next: unknown[] = [];
  if (error instanceof AggregateError) next.push(...error.errors);
  if (error.cause !== undefined) next.push(error.cause);
  return next.flatMap((reason) => [reason, ...reasons(reason, depth + 1)]);
}

function hintFor(errors: readonly unknown[], config: Config | undefined): string | undefined {
  for (const error of errors) {
    const { code, syscall, port } = (error ?? {}) as SystemError;
    if (code === 'EADDRINUSE') {
      return `another process listens on port ${String(port ?? '?')}: stop it, or give this one another port (PORT, ADMIN_PORT, OPS_PORT)`;
    }
    if (code === 'EACCES' && syscall === 'listen') {
      return 'ports below 1024 need privileges: use a port above 1024 (PORT) behind a proxy or load balancer';
    }
    if (code === 'EADDRNOTAVAIL') {
      return 'the host to listen on is not an address of this machine: check HOST, ADMIN_HOST, OPS_HOST';
    }
    if (code === 'ECONNREFUSED' || code === 'ETIMEDOUT' || code === 'EHOSTUNREACH') {
      return `nothing answered at ${String(port ?? 'that port')}: is ${dependency(port, config)} running and reachable, and is its URL right?`;
    }
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
      return `a host name in ${dependencyVariables(config)} does not resolve: check its spelling and DNS`;
    }
    if (code === '28P01' || code === '28000') {
      return 'PostgreSQL refused the user or password: check DATABASE_URL';
    }
    if (code === '3D000') return 'the database named in DATABASE_URL does not exist: create it';
    if (code === 'SQLITE_CANTOPEN' || (code === 'ENOENT' && config?.database.kind === 'sqlite')) {
      return "the SQLite file cannot be opened: check that DATABASE_URL's folder exists and this user may write there";
    }
    if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') {
      return 'this user may not write a file it needs (the SQLite database, its -wal and -shm files): check the permissions';
    }
  }
  return undefined;
}

function dependency(port: unknown, config: Config | undefined): string {
  if (port === 6379 || (config?.redis !== undefined && config.database.kind === 'sqlite')) {
    return 'Redis (REDIS_URL)';
  }
  if (port === 5432 || config?.redis === undefined) return 'PostgreSQL (DATABASE_URL)';
  return 'the database (DATABASE_URL) or Redis (REDIS_URL)';
}

function dependencyVariables(config: Config | undefined): string {
  return config?.redis === undefined ? 'DATABASE_URL' : 'DATABASE_URL or REDIS_URL';
}

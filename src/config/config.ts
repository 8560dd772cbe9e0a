import { isIP } from 'node:net';
import type { KeyEnvironment } from '../domain/api-keys/api-key.js';
import { redactUrl } from './redact.js';

export type DatabaseConfig =
  | { kind: 'sqlite'; path: string }
  | {
      kind: 'postgres';
      url: string;
      /** Connections this instance keeps open at most (DATABASE_POOL_MAX). */
      poolMax: number;
      /** A statement running longer is cancelled by the server (DATABASE_STATEMENT_TIMEOUT_MS). */
      statementTimeoutMs: number;
      /** Giving up on opening a connection (DATABASE_CONNECT_TIMEOUT_MS). */
      connectTimeoutMs: number;
    };

/** A Redis Cluster node the client first asks for the cluster's map (REDIS_CLUSTER_NODES). */
export interface RedisNode {
  readonly host: string;
  readonly port: number;
}

/** Rate-limit counters and bans shared by every instance, when REDIS_URL or REDIS_CLUSTER_NODES is set. */
export interface RedisConfig {
  /** The one Redis (REDIS_URL); empty when clusterNodes is set. */
  readonly url: string;
  /** Seed nodes of a Redis Cluster (REDIS_CLUSTER_NODES), used instead of url when set. */
  readonly clusterNodes?: readonly RedisNode[];
  /**
   * Prefix of every key this service writes (REDIS_KEY_PREFIX; `petstore:<PETSTORE_ENV>:` by
   * default), so deployments and environments can share a server.
   */
  readonly keyPrefix: string;
  /** A command not answered within this time fails (REDIS_COMMAND_TIMEOUT_MS): 503, never a hang. */
  readonly commandTimeoutMs: number;
}
export type TrustProxy = boolean | number | string;

/** Open connections at most; past either cap a new connection is closed at once. */
export interface ConnectionLimits {
  /** In all (MAX_CONNECTIONS): keep it under the process's open-file limit (ulimit -n). */
  readonly total: number;
  /**
   * From one client address (MAX_CONNECTIONS_PER_ADDRESS; IPv6 by /64), so a few addresses holding
   * half-open connections cannot take every slot. It is the socket's address: behind a proxy every
   * connection comes from the proxy, so there set it to MAX_CONNECTIONS (the proxy then holds the
   * clients' slow connections, and TRUST_PROXY rate-limits them by X-Forwarded-For).
   */
  readonly perAddress: number;
  /**
   * After a connection from an address was closed for pipelining too far ahead, how long every new
   * connection from that address is closed at once (PIPELINE_PENALTY_SECONDS; 0: never). A client
   * that reconnects after each such close would otherwise have each new connection's first read
   * parsed in full, thousands of requests, and slow every other client for as long as it goes on.
   * The proxies TRUST_PROXY lists by address are exempt, as from the per-address cap; behind
   * another proxy every connection comes from the proxy: there set it to 0.
   */
  readonly pipelinePenaltyMs: number;
  /**
   * Addresses and CIDR ranges the per-address cap leaves out: the proxies TRUST_PROXY lists by
   * address. Every connection a proxy opens comes from its one address, so a burst of clients
   * through it would otherwise fill that address's slots and refuse its health checks too. TRUST_PROXY
   * `true` or a hop count names no address, and exempts none.
   */
  readonly proxies: readonly string[];
}

/**
 * How long the server waits on a client and on itself. Tests set them short instead of waiting out
 * the production values; docs and error messages show them through describeDuration.
 */
export interface Timeouts {
  /** The request line and headers must arrive within this (HEADERS_TIMEOUT_MS): 408, closed. */
  readonly headersMs: number;
  /** The whole request, body included, must arrive within this (REQUEST_TIMEOUT_MS): 408. */
  readonly requestMs: number;
  /** An idle keep-alive connection is closed after this (KEEP_ALIVE_TIMEOUT_MS). */
  readonly keepAliveMs: number;
  /**
   * On SIGTERM or SIGINT, requests still in flight after this lose their connections and the exit
   * status is 1 (SHUTDOWN_GRACE_MS).
   */
  readonly shutdownGraceMs: number;
}

export const DEFAULT_TIMEOUTS: Timeouts = Object.freeze({
  headersMs: 10_000,
  requestMs: 30_000,
  keepAliveMs: 72_000,
  shutdownGraceMs: 10_000,
});

/**
 * Stopping and first start (DRAIN_SECONDS, PETSTORE_BOOTSTRAP_KEY): how an instance leaves a load
 * balancer, and whether it may make the first API key itself.
 */
export interface Operations {
  /**
   * On SIGTERM, /readyz answers 503 at once and the instance keeps serving this long (answering with
   * Connection: close) before it stops accepting: long enough for a load balancer's health checks to
   * take it out (HAProxy's inter x fall in scripts/haproxy-config.sh). 0 stops at once.
   */
  readonly drainSeconds: number;
  /**
   * 'auto': with no key at all, an interactive start on SQLite (stderr a terminal) makes one and
   * shows it there; any other start says how to make one. 'off': never makes one.
   */
  readonly bootstrapKey: 'auto' | 'off';
}

export const DEFAULT_DRAIN_SECONDS = 5;

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly database: DatabaseConfig;
  readonly redis: RedisConfig | undefined;
  readonly environment: KeyEnvironment;
  /** Address clients use, without a trailing slash and without /v1. */
  readonly publicBaseUrl: string;
  /** The other environment's address (STAGING_BASE_URL or PRODUCTION_BASE_URL), when set. */
  readonly otherEnvironment: { name: KeyEnvironment; baseUrl: string } | undefined;
  readonly trustProxy: TrustProxy;
  readonly connections: ConnectionLimits;
  readonly banAfter: number;
  readonly banSeconds: number;
  readonly corsOrigins: readonly string[];
  readonly logLevel: string;
  readonly timeouts: Timeouts;
  readonly operations: Operations;
  readonly keyLife: KeyLifeConfig;
  /** The admin API's own listener (ADMIN_PORT, ADMIN_HOST); undefined, the default, is off. */
  readonly admin: AdminListenerConfig | undefined;
  /**
   * The operations listener (OPS_PORT, OPS_HOST): /metrics, /healthz, /readyz and /version apart
   * from the public one, which then serves no /metrics. Undefined, the default: /metrics is public.
   */
  readonly ops: OpsListenerConfig | undefined;
  /** DOCS=off: no /docs page (its OpenAPI document is still served). */
  readonly docs: boolean;
  /** LOG_SAMPLE_SUCCESS: the share of 2xx/3xx request lines kept (4xx/5xx always are); 0..1. */
  readonly logSampleSuccess: number;
  /** OpenTelemetry traces from the standard OTEL_* variables; undefined, the default, is off. */
  readonly tracing: TracingConfig | undefined;
  /**
   * PETSTORE_AUDIT_LOG_FILE: the file the CLI appends its key audit lines to (JSON, one a line);
   * unset, the default, they go to its standard error. The server logs them with its other lines.
   */
  readonly auditLogFile: string | undefined;
}

/** The OTEL_TRACES_SAMPLER values of the OpenTelemetry specification. */
export const TRACE_SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;

export interface TracingConfig {
  readonly protocol: 'http/protobuf' | 'http/json';
  readonly sampler: (typeof TRACE_SAMPLERS)[number];
  /** OTEL_TRACES_SAMPLER_ARG for the ratio samplers (1 when unset, as the specification says). */
  readonly ratio: number;
}

/**
 * On only when an exporter is named or given an address, as the OpenTelemetry SDKs read these
 * variables, so that an instance with none of them loads no tracing code at all. The exporter
 * reads the address, headers and timeout itself (OTEL_EXPORTER_OTLP_*), the resource detector
 * OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES; what is read here decides whether and how.
 */
function tracing(env: Env): TracingConfig | undefined {
  // The specification's boolean: true in any case is true, anything else false.
  if (read(env, 'OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return;
  const exporter = read(env, 'OTEL_TRACES_EXPORTER');
  if (exporter !== undefined && exporter !== 'otlp' && exporter !== 'none') {
    fail('OTEL_TRACES_EXPORTER', 'otlp or none', exporter);
  }
  const endpoint =
    read(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') ?? read(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  if (exporter === 'none' || (exporter === undefined && endpoint === undefined)) return;
  const protocolVariable =
    read(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') === undefined
      ? 'OTEL_EXPORTER_OTLP_PROTOCOL'
      : 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL';
  const protocols = ['http/protobuf', 'http/json'] as const;
  const sampler = oneOf(env, 'OTEL_TRACES_SAMPLER', TRACE_SAMPLERS, 'parentbased_always_on');
  return Object.freeze({
    protocol: oneOf(env, protocolVariable, protocols, 'http/protobuf'),
    sampler,
    ratio: fraction(env, 'OTEL_TRACES_SAMPLER_ARG', 1),
  });
}

function fraction(env: Env, name: string, fallback: number): number {
  const raw = read(env, name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^\d*\.?\d+$/.test(raw) || value > 1) {
    note(name, 'a number from 0 to 1', raw);
    return fallback;
  }
  return value;
}

/** Where the operations endpoints listen: never on the pet API's nor the admin API's port. */
export type OpsListenerConfig = AdminListenerConfig;

function opsListener(
  env: Env,
  publicPort: number,
  admin: AdminListenerConfig | undefined,
): OpsListenerConfig | undefined {
  const raw = read(env, 'OPS_PORT');
  if (raw === undefined) return undefined;
  const port = integer(env, 'OPS_PORT', 0, 1, 65535);
  if (port === publicPort) fail('OPS_PORT', `a port other than PORT (${publicPort})`, raw);
  if (port === admin?.port) fail('OPS_PORT', `a port other than ADMIN_PORT (${admin.port})`, raw);
  return Object.freeze({ port, host: read(env, 'OPS_HOST') ?? '127.0.0.1' });
}

/** Usage counting per key (issue 17). */
export interface KeyLifeConfig {
  /** PETSTORE_USAGE_FLUSH_MS: how often a server writes its usage counts (and at shutdown). */
  readonly usageFlushMs: number;
  /** PETSTORE_USAGE_RETENTION_DAYS: usage days kept; older ones are purged in the background. */
  readonly usageRetentionDays: number;
}

function keyLife(env: Env): KeyLifeConfig {
  return Object.freeze({
    usageFlushMs: integer(env, 'PETSTORE_USAGE_FLUSH_MS', 60_000, 50, 3_600_000),
    usageRetentionDays: integer(env, 'PETSTORE_USAGE_RETENTION_DAYS', 90, 1, 3_650),
  });
}

/** Where the admin API listens: never on the pet API's port. */
export interface AdminListenerConfig {
  readonly port: number;
  /** Default 127.0.0.1: reachable from the host only unless chosen otherwise. */
  readonly host: string;
}

function adminListener(env: Env, publicPort: number): AdminListenerConfig | undefined {
  const raw = read(env, 'ADMIN_PORT');
  if (raw === undefined) return undefined;
  const port = integer(env, 'ADMIN_PORT', 0, 1, 65535);
  if (port === publicPort) fail('ADMIN_PORT', `a port other than PORT (${publicPort})`, raw);
  return Object.freeze({ port, host: read(env, 'ADMIN_HOST') ?? '127.0.0.1' });
}

/** Every bad variable found, each a sentence naming it; the message lists them all. */
export class ConfigError extends Error {
  readonly problems: readonly string[];

  constructor(problems: string | readonly string[]) {
    const list = typeof problems === 'string' ? [problems] : problems;
    super(
      list.length === 1
        ? (list[0] as string)
        : `${list.length} settings are wrong:\n${list.map((p) => `  - ${p}`).join('\n')}`,
    );
    this.name = 'ConfigError';
    this.problems = Object.freeze([...list]);
  }
}

/**
 * The problems found so far while loadConfig runs (it runs synchronously): a bad value read by
 * integer, oneOf or fraction is noted here and its default used, so that one start reports every
 * bad variable, not only the first.
 */
let noted: string[] | undefined;

function note(name: string, expected: string, got: string): void {
  if (noted === undefined) fail(name, expected, got);
  noted.push(problem(name, expected, got));
}

function problem(name: string, expected: string, got: string): string {
  // A mistyped URL is quoted back without its password (config/redact.ts).
  return `${name} must be ${expected} (got ${JSON.stringify(redactUrl(got))})`;
}

/** A section's value, or its fallback once its problems are noted. */
function section<T>(fallback: T, read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (!(error instanceof ConfigError) || noted === undefined) throw error;
    noted.push(...error.problems);
    return fallback;
  }
}

type Env = Readonly<Record<string, string | undefined>>;

export const DEFAULT_SQLITE_PATH = './data/petstore.db';
export const DEFAULT_BAN_SECONDS = 900;
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function fail(name: string, expected: string, got: string): never {
  throw new ConfigError(problem(name, expected, got));
}

function read(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = read(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    note(name, `an integer ${min}-${max}`, raw);
    return fallback;
  }
  return Number(raw);
}

function oneOf<T extends string>(env: Env, name: string, values: readonly T[], fallback: T): T {
  const raw = read(env, name);
  if (raw === undefined) return fallback;
  if (!(values as readonly string[]).includes(raw)) {
    note(name, `one of ${values.join(', ')}`, raw);
    return fallback;
  }
  return raw as T;
}

function url(
  name: string,
  raw: string,
  protocols: readonly string[],
  expected = `a URL (${protocols.join(' or ')})`,
): URL {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    fail(name, expected, raw);
  }
  if (!protocols.includes(parsed.protocol)) fail(name, expected, raw);
  return parsed;
}

const DATABASE_URL_FORMS = 'sqlite:<path> or a URL (postgres: or postgresql:)';

function database(env: Env): DatabaseConfig {
  const raw = read(env, 'DATABASE_URL');
  if (raw === undefined) return { kind: 'sqlite', path: DEFAULT_SQLITE_PATH };
  if (raw.startsWith('sqlite:')) {
    const path = raw.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (path === '') fail('DATABASE_URL', DATABASE_URL_FORMS, raw);
    return { kind: 'sqlite', path };
  }
  url('DATABASE_URL', raw, ['postgres:', 'postgresql:'], DATABASE_URL_FORMS);
  return {
    kind: 'postgres',
    url: raw,
    poolMax: integer(env, 'DATABASE_POOL_MAX', 10, 1, 1000),
    statementTimeoutMs: integer(env, 'DATABASE_STATEMENT_TIMEOUT_MS', 5_000, 100, 600_000),
    connectTimeoutMs: integer(env, 'DATABASE_CONNECT_TIMEOUT_MS', 3_000, 100, 600_000),
  };
}

function redis(env: Env, environment: KeyEnvironment): RedisConfig | undefined {
  const raw = read(env, 'REDIS_URL');
  const nodes = read(env, 'REDIS_CLUSTER_NODES');
  if (raw !== undefined && nodes !== undefined) {
    // Either would be a guess: one Redis and a cluster keep counters apart, so limits would leak.
    throw new ConfigError(
      'REDIS_URL and REDIS_CLUSTER_NODES are both set: set REDIS_URL for one Redis or REDIS_CLUSTER_NODES for a Redis Cluster, not both',
    );
  }
  if (raw === undefined && nodes === undefined) return undefined;
  if (raw !== undefined) url('REDIS_URL', raw, ['redis:', 'rediss:']);
  // The environment is part of the default, so staging and production on one Redis never share a
  // budget; a prefix set by hand is the operator's to keep apart per environment.
  const keyPrefix = read(env, 'REDIS_KEY_PREFIX') ?? `petstore:${environment}:`;
  if (!/^[A-Za-z0-9:_.-]{1,64}$/.test(keyPrefix)) {
    fail('REDIS_KEY_PREFIX', '1 to 64 letters, digits or :_.-', keyPrefix);
  }
  return Object.freeze({
    url: raw ?? '',
    ...(nodes === undefined ? {} : { clusterNodes: clusterNodes(nodes) }),
    keyPrefix,
    commandTimeoutMs: integer(env, 'REDIS_COMMAND_TIMEOUT_MS', 1_000, 10, 600_000),
  });
}

/** `host:port,host:port,...`; an IPv6 address in brackets (`[::1]:7000`). */
function clusterNodes(raw: string): readonly RedisNode[] {
  const expected = 'host:port[,host:port...] (an IPv6 address in brackets)';
  const parsed = raw.split(',').map((entry) => {
    const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(entry.trim());
    const port = Number(match?.[3]);
    const host = match?.[1] ?? match?.[2];
    if (host === undefined || !(port >= 1 && port <= 65_535)) {
      fail('REDIS_CLUSTER_NODES', expected, raw);
    }
    return Object.freeze({ host, port });
  });
  return Object.freeze(parsed);
}

const TRUST_PROXY_EXPECTED = 'true, false, a hop count, or trusted addresses/CIDRs';

function trustProxy(env: Env): TrustProxy {
  const raw = read(env, 'TRUST_PROXY');
  if (raw === undefined || raw === 'false') return false;
  if (raw === 'true') return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  // A comma-separated list of trusted addresses or CIDR ranges, as Fastify's trustProxy takes it.
  if (!/^[0-9a-fA-F.:/, ]+$/.test(raw)) fail('TRUST_PROXY', TRUST_PROXY_EXPECTED, raw);
  trustedAddresses(raw);
  return raw;
}

/** The entries of a TRUST_PROXY list, each an address or an address/prefix-length range. */
function trustedAddresses(raw: string): string[] {
  const entries = raw
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  for (const entry of entries) {
    const [address = '', prefix, extra] = entry.split('/');
    const family = isIP(address);
    const bits = family === 6 ? 128 : 32;
    const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits);
    if (family === 0 || !prefixOk || extra !== undefined) {
      fail('TRUST_PROXY', TRUST_PROXY_EXPECTED, raw);
    }
  }
  return entries;
}

/** A base address as the OpenAPI `servers` take it: without a trailing `/` or `/v1`. */
function baseUrl(name: string, raw: string): string {
  const parsed = url(name, raw, ['http:', 'https:']);
  return (parsed.origin + parsed.pathname).replace(/\/+$/, '').replace(/\/v1$/, '');
}

/**
 * The interface names a production and a staging address; an instance serves one (PUBLIC_BASE_URL)
 * and lists the other after it. Only the other environment's variable is read, so one settings
 * file may hold both.
 */
function otherEnvironment(env: Env, serving: KeyEnvironment): Config['otherEnvironment'] {
  const name: KeyEnvironment = serving === 'production' ? 'staging' : 'production';
  const variable = `${name.toUpperCase()}_BASE_URL`;
  const raw = read(env, variable);
  return raw === undefined ? undefined : Object.freeze({ name, baseUrl: baseUrl(variable, raw) });
}

/**
 * The per-address default leaves room for a benchmark's 50-100 keep-alive connections from one
 * host and for a small proxy pool, while 16 addresses are needed to take every slot of the total.
 */
export const DEFAULT_MAX_CONNECTIONS = 4096;
export const DEFAULT_MAX_CONNECTIONS_PER_ADDRESS = 256;
export const DEFAULT_PIPELINE_PENALTY_SECONDS = 10;

function connections(env: Env, trust: TrustProxy): ConnectionLimits {
  const total = integer(env, 'MAX_CONNECTIONS', DEFAULT_MAX_CONNECTIONS, 1, 1_000_000);
  const proxies = typeof trust === 'string' ? trustedAddresses(trust) : [];
  return Object.freeze({
    total,
    perAddress: integer(
      env,
      'MAX_CONNECTIONS_PER_ADDRESS',
      Math.min(DEFAULT_MAX_CONNECTIONS_PER_ADDRESS, total),
      1,
      total,
    ),
    pipelinePenaltyMs:
      integer(env, 'PIPELINE_PENALTY_SECONDS', DEFAULT_PIPELINE_PENALTY_SECONDS, 0, 86_400) * 1000,
    proxies: Object.freeze(proxies),
  });
}

function timeouts(env: Env): Timeouts {
  const headersMs = integer(env, 'HEADERS_TIMEOUT_MS', DEFAULT_TIMEOUTS.headersMs, 100, 3_600_000);
  const requestMs = integer(env, 'REQUEST_TIMEOUT_MS', DEFAULT_TIMEOUTS.requestMs, 100, 3_600_000);
  // Node refuses a headers timeout longer than the request timeout: say so by name instead.
  if (requestMs < headersMs) {
    fail('REQUEST_TIMEOUT_MS', `at least HEADERS_TIMEOUT_MS (${headersMs})`, String(requestMs));
  }
  return Object.freeze({
    headersMs,
    requestMs,
    keepAliveMs: integer(
      env,
      'KEEP_ALIVE_TIMEOUT_MS',
      DEFAULT_TIMEOUTS.keepAliveMs,
      100,
      3_600_000,
    ),
    shutdownGraceMs: integer(
      env,
      'SHUTDOWN_GRACE_MS',
      DEFAULT_TIMEOUTS.shutdownGraceMs,
      100,
      3_600_000,
    ),
  });
}

/** Parses the environment once; throws ConfigError naming every bad variable. */
export function loadConfig(env: Env): Config {
  noted = [];
  try {
    const config = readConfig(env);
    if (noted.length > 0) throw new ConfigError(noted);
    return config;
  } finally {
    noted = undefined;
  }
}

function readConfig(env: Env): Config {
  const port = integer(env, 'PORT', 8080, 1, 65535);
  const host = read(env, 'HOST') ?? '127.0.0.1';
  const publicRaw = read(env, 'PUBLIC_BASE_URL');
  let publicBaseUrl: string;
  if (publicRaw === undefined) {
    const shownHost = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
    publicBaseUrl = `http://${shownHost}:${port}`;
  } else {
    publicBaseUrl = section('', () => baseUrl('PUBLIC_BASE_URL', publicRaw));
  }
  const corsRaw = read(env, 'CORS_ORIGINS');
  const corsOrigins = corsRaw === undefined ? [] : corsRaw.split(',').map((o) => o.trim());
  section(undefined, () => {
    for (const origin of corsOrigins) {
      if (url('CORS_ORIGINS', origin, ['http:', 'https:']).origin !== origin) {
        fail(
          'CORS_ORIGINS',
          'a comma-separated list of origins like https://app.example.com',
          origin,
        );
      }
    }
  });
  const environment = oneOf(env, 'PETSTORE_ENV', ['production', 'staging'] as const, 'production');
  const admin = section(undefined, () => adminListener(env, port));
  const trust = section<TrustProxy>(false, () => trustProxy(env));
  return Object.freeze({
    port,
    host,
    database: Object.freeze(
      section<DatabaseConfig>({ kind: 'sqlite', path: DEFAULT_SQLITE_PATH }, () => database(env)),
    ),
    redis: section(undefined, () => redis(env, environment)),
    environment,
    publicBaseUrl,
    otherEnvironment: section(undefined, () => otherEnvironment(env, environment)),
    trustProxy: trust,
    connections: connections(env, trust),
    banAfter: integer(env, 'PETSTORE_BAN_AFTER', 10, 1, 1_000_000),
    banSeconds: integer(env, 'PETSTORE_BAN_SECONDS', DEFAULT_BAN_SECONDS, 1, 31_536_000),
    corsOrigins: Object.freeze(corsOrigins),
    logLevel: oneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    timeouts: section(DEFAULT_TIMEOUTS, () => timeouts(env)),
    operations: Object.freeze({
      drainSeconds: integer(env, 'DRAIN_SECONDS', DEFAULT_DRAIN_SECONDS, 0, 3_600),
      bootstrapKey: oneOf(env, 'PETSTORE_BOOTSTRAP_KEY', ['auto', 'off'] as const, 'auto'),
    }),
    admin,
    ops: section(undefined, () => opsListener(env, port, admin)),
    docs: oneOf(env, 'DOCS', ['on', 'off'] as const, 'on') === 'on',
    keyLife: keyLife(env),
    logSampleSuccess: fraction(env, 'LOG_SAMPLE_SUCCESS', 1),
    auditLogFile: env.PETSTORE_AUDIT_LOG_FILE?.trim() || undefined,
    tracing: section(undefined, () => tracing(env)),
  });
}

/** The one place the process environment is read. */
export function loadConfigFromProcess(): Config {
  return loadConfig(process.env);
}

/**
 * What `petstore check` reads from the environment: the API key of the deployment it checks
 * (PETSTORE_API_KEY), which a command line would show to other users and keep in shell history.
 * Not a setting of the service, so not part of Config.
 */
export function checkEnvironmentFromProcess(): { PETSTORE_API_KEY?: string } {
  const key = process.env.PETSTORE_API_KEY;
  return key === undefined ? {} : { PETSTORE_API_KEY: key };
}

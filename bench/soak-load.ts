/**
 * The part of `npm run soak`'s load (bench/README.md, "Soak") that wrk cannot send: requests from
 * other loopback addresses than 127.0.0.1. Keyed lists from a few addresses over keep-alive, and
 * scanner-like requests (well-formed unknown keys, revoked keys, malformed tokens) from rotating
 * addresses, each on a new connection. A small share of the load, so Node's HTTP client (some
 * 100 µs of CPU a request) does not take the CPU the service needs; wrk sends the bulk.
 *
 * Paced: every tick, as many requests as the target rate says are due, up to a cap of requests in
 * flight (past it a request is counted as `late` rather than queued without end). A child process
 * of its own, started by bench/soak.ts with its settings as JSON in SOAK_LOAD_CONFIG; it answers
 * the message `report` with the figures since the last one, and stops on SIGTERM or when the
 * channel closes.
 */
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { generateApiKey } from '../src/domain/api-keys/key-format.js';

export interface SoakLoadConfig {
  /** Base URL of the service, on loopback. */
  target: string;
  ratePerSecond: number;
  /** Active keys, used round-robin for the keyed lists. */
  keys: readonly string[];
  revokedKeys: readonly string[];
  /** The few loopback addresses the valid traffic comes from, one keep-alive agent each. */
  addresses: readonly string[];
  /**
   * Requests without a valid key come from a rotating address of 127.1.0.0/16, a new one every
   * this many requests, the way scanners arrive: the per-address budget entries must be swept.
   */
  requestsPerScannerAddress: number;
  maxInFlight: number;
  /**
   * Every request carries a made-up X-Forwarded-For (the service trusts the header): junk of up
   * to 12 KB, or a random IPv4 or IPv6 address. The junk must count against the connection's
   * address and never be kept; the addresses each get an entry, within the bound.
   */
  hostileForwardedFor?: boolean;
}

/** A made-up X-Forwarded-For: a third junk of random length, a third IPv4, a third IPv6. */
function hostileForwardedFor(n: number): string {
  const random = (below: number) => Math.floor(Math.random() * below);
  switch (n % 3) {
    case 0:
      return `junk-${n}-${'x'.repeat(random(12 * 1024))}`;
    case 1:
      return `${random(224)}.${random(256)}.${random(256)}.${random(256)}`;
    default:
      return `2001:db8:${random(65_536).toString(16)}:${random(65_536).toString(16)}::${random(65_536).toString(16)}`;
  }
}

/** One interval's figures, sent to the parent. */
export interface SoakLoadReport {
  sent: number;
  answered: number;
  /** Due by the schedule but not sent: maxInFlight requests were already waiting. */
  late: number;
  /** Statuses outside what each kind of request may get, socket errors, timeouts. */
  errors: number;
  /** The first few unexpected outcomes of the interval, for the error message. */
  errorDetail: string[];
  statuses: Record<string, number>;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

type Kind = 'list' | 'unknown-key' | 'revoked-key' | 'malformed-key';

/** Keyed lists, then requests without a valid key: unknown, revoked, malformed. */
const CYCLE: readonly Kind[] = [
  'list',
  'unknown-key',
  'revoked-key',
  'list',
  'unknown-key',
  'malformed-key',
  'unknown-key',
  'revoked-key',
];

const STATUSES = ['available', 'pending', 'sold'] as const;
const TICK_MS = 5;
const TIMEOUT_MS = 10_000;

function expected(kind: Kind, status: number): boolean {
  // 429 once the address has spent its 30 requests of the minute without a valid key.
  return kind === 'list' ? status === 200 : status === 401 || status === 429;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

function run(config: SoakLoadConfig): void {
  const base = new URL(config.target);
  const agents = config.addresses.map(
    (localAddress) =>
      new Agent({
        keepAlive: true,
        maxSockets: Math.ceil(config.maxInFlight / config.addresses.length),
        localAddress,
      }),
  );
  const keys = [...config.keys];
  let n = 0;
  let scannerAddress = 0;
  let inFlight = 0;
  let current = freshInterval();
  let latencies: number[] = [];

  function freshInterval(): SoakLoadReport {
    return {
      sent: 0,
      answered: 0,
      late: 0,
      errors: 0,
      errorDetail: [],
      statuses: {},
      p50Ms: 0,
      p99Ms: 0,
      maxMs: 0,
    };
  }

  function fail(detail: string): void {
    current.errors += 1;
    if (current.errorDetail.length < 5) current.errorDetail.push(detail);
  }

  function send(): void {
    const kind = CYCLE[n % CYCLE.length] as Kind;
    n += 1;
    const validKey = keys[n % keys.length] as string;
    const method = 'GET';
    const path = `/v1/pets?limit=20&status=${STATUSES[n % STATUSES.length]}`;
    let token: string = validKey;
    const headers: Record<string, string> = {};
    switch (kind) {
      case 'unknown-key':
        token = generateApiKey('production');
        break;
      case 'revoked-key':
        token = config.revokedKeys[n % config.revokedKeys.length] as string;
        break;
      case 'malformed-key':
        token = `pa_live_not-a-key-${n}`;
        break;
      case 'list':
        break;
    }
    headers.authorization = `Bearer ${token}`;
    const scanner = kind !== 'list';
    if (config.hostileForwardedFor === true) {
      headers['x-forwarded-for'] = hostileForwardedFor(n);
    }
    let agent: Agent | false;
    let localAddress: string | undefined;
    if (scanner) {
      // A new connection from the scanner's address: one address sends a few requests, then the
      // next one takes over, so the per-address entries keep coming and must keep going.
      scannerAddress += 1;
      const a = Math.floor(scannerAddress / config.requestsPerScannerAddress) % 65_536;
      localAddress = `127.1.${a >> 8}.${a & 255}`;
      agent = false;
    } else {
      agent = agents[n % agents.length] as Agent;
    }
    const started = performance.now();
    inFlight += 1;
    current.sent += 1;
    let settled = false;
    const finish = (status: number | undefined, detail?: string) => {
      if (settled) return;
      settled = true;
      inFlight -= 1;
      current.answered += 1;
      latencies.push(performance.now() - started);
      const label = status === undefined ? 'error' : String(status);
      current.statuses[label] = (current.statuses[label] ?? 0) + 1;
      if (status === undefined || !expected(kind, status)) {
        fail(`${kind} ${method} ${path}: ${detail ?? status}`);
      }
    };
    const req = request(
      {
        host: base.hostname,
        port: base.port,
        method,
        path,
        headers,
        agent,
        ...(localAddress ? { localAddress } : {}),
        timeout: TIMEOUT_MS,
      },
      (res) => {
        res.resume();
        res.on('end', () => finish(res.statusCode));
        res.on('error', (error) => finish(undefined, error.message));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (error) => finish(undefined, error.message));
    req.end();
  }

  const startedAt = performance.now();
  let scheduled = 0;
  const ticker = setInterval(() => {
    const due = Math.floor(((performance.now() - startedAt) / 1000) * config.ratePerSecond);
    while (scheduled < due) {
      scheduled += 1;
      if (inFlight >= config.maxInFlight) current.late += 1;
      else send();
    }
  }, TICK_MS);

  const report = () => {
    const sorted = Float64Array.from(latencies).sort();
    latencies = [];
    const figures: SoakLoadReport = {
      ...current,
      p50Ms: percentile(sorted, 50),
      p99Ms: percentile(sorted, 99),
      maxMs: sorted.length > 0 ? (sorted[sorted.length - 1] ?? 0) : 0,
    };
    current = freshInterval();
    process.send?.(figures);
  };

  // Keys created during the soak join the rotation, as new customers' keys would.
  process.on('message', (message: { addKeys?: string[]; report?: true }) => {
    if (Array.isArray(message.addKeys)) keys.push(...message.addKeys);
    if (message.report) report();
  });

  const stop = () => {
    clearInterval(ticker);
    for (const agent of agents) agent.destroy();
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  // The soak went away without stopping us: no orphaned load.
  process.once('disconnect', stop);
}

const raw = process.env.SOAK_LOAD_CONFIG;
if (raw === undefined) {
  process.stderr.write('soak-load: SOAK_LOAD_CONFIG is not set; start it through npm run soak\n');
  process.exit(2);
}
run(JSON.parse(raw) as SoakLoadConfig);

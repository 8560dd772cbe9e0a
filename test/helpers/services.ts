import { execFileSync } from 'node:child_process';
import { connect } from 'node:net';
import { describe, it } from 'vitest';

/** Local services some suites run against (.ci/run starts them when they do not answer). */
export type Service = 'redis' | 'postgres';

interface Probe {
  port: number;
  /** Sent once connected; the service must answer with `expect` (else an open port is enough). */
  hello?: { send: string; expect: string };
  start: string;
}

const HOST = '127.0.0.1';
const PROBE_TIMEOUT_MS = 1_000;

const PROBES: Record<Service, Probe> = {
  redis: {
    port: 6379,
    hello: { send: 'PING\r\n', expect: '+PONG' },
    start: 'redis-server --daemonize yes --port 6379 --save "" --appendonly no',
  },
  postgres: { port: 5432, start: 'pg_ctlcluster <version> main start' },
};

/** The address tests use for a service. */
export const serviceUrl = {
  redis: `redis://${HOST}:${PROBES.redis.port}`,
  postgres: `postgres://${HOST}:${PROBES.postgres.port}`,
} as const satisfies Record<Service, string>;

const answers = new Map<Service, Promise<boolean>>();

/** Whether the service answers on 127.0.0.1 now (asked once per test file). */
export function serviceAnswers(service: Service): Promise<boolean> {
  let answer = answers.get(service);
  if (answer === undefined) {
    answer = probe(PROBES[service]);
    answers.set(service, answer);
  }
  return answer;
}

function probe({ port, hello }: Probe): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, HOST);
    let received = '';
    const finish = (ok: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => finish(false), PROBE_TIMEOUT_MS);
    socket.once('error', () => finish(false));
    socket.once('connect', () => {
      if (hello === undefined) finish(true);
      else socket.write(hello.send);
    });
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString();
      if (hello !== undefined && received.includes('\r\n')) {
        finish(received.startsWith(hello.expect));
      }
    });
  });
}

/**
 * Whether `suite`, which needs `service`, can run. When the service does not answer, the suite is
 * skipped with a warning, except in CI (CI=true), where it becomes one failing test: a CI run
 * must never pass by skipping what it was meant to check.
 */
export async function requireService(service: Service, suite: string): Promise<boolean> {
  if (await serviceAnswers(service)) return true;
  const { port, start } = PROBES[service];
  const why = `${service} does not answer on ${HOST}:${port} (start it: ${start})`;
  if (process.env.CI === 'true') {
    describe(suite, () => {
      it(`needs ${service}`, () => {
        throw new Error(`${why}: CI must provide it`);
      });
    });
  } else {
    console.warn(`skipping ${suite}: ${why}`);
    // A file with no test at all counts as failed; a skipped one shows what did not run.
    describe.skip(suite, () => {
      it(`needs ${service}`, () => {});
    });
  }
  return false;
}

/** `describe`, when the service answers; see requireService. Await it at the top of the file. */
export async function describeWithService(
  service: Service,
  suite: string,
  body: () => void,
): Promise<void> {
  if (await requireService(service, suite)) describe(suite, body);
}

/** Whether HAProxy is on PATH, for the suites that run instances behind it. */
export function haproxyInstalled(): boolean {
  try {
    execFileSync('haproxy', ['-v'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { freePort, REPO_ROOT } from './server-process.js';
import { testRunEnv } from './test-run.js';

const PRISM = join(REPO_ROOT, 'node_modules/.bin/prism');
const OUTPUT_KEPT = 50_000;

/** One entry of Prism's `sl-violations` header. */
export interface Violation {
  /** `['request', ...]` or `['response', ...]`, then e.g. `body`, `header`, a field name. */
  location: string[];
  severity: string;
  code?: string | number;
  message: string;
}

export interface PrismProxy {
  url: string;
  /** The last part of Prism's log, for failure messages. */
  output(): string;
  /** Stops Prism and waits until it has exited. */
  stop(): Promise<void>;
}

/**
 * Starts Stoplight Prism's validating proxy on loopback in front of `upstream`, with `--errors=false`:
 * every request is forwarded, and what breaks the document is reported in `sl-violations`.
 */
export async function startPrismProxy(
  documentFile: string,
  upstream: string,
  // How long Prism may take to start is not something the service promises: on a machine whose
  // cores the rest of the suite keeps busy (an image stage's npm ci beside it), its start took
  // over 20 s. A hung Prism still fails here, before vitest's hook timeout (120 s).
  timeoutMs = 100_000,
): Promise<PrismProxy> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      PRISM,
      'proxy',
      documentFile,
      upstream,
      '--port',
      String(port),
      '--host',
      '127.0.0.1',
      '--errors=false',
    ],
    {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        ...testRunEnv(),
        NO_COLOR: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-OUTPUT_KEPT);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const running = () => child.exitCode === null && child.signalCode === null;
  // Should the test process end without afterAll, Prism still goes with it.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);

  const stop = async () => {
    process.off('exit', killOnExit);
    if (!running()) return;
    child.kill('SIGTERM');
    const force = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(force);
  };

  const deadline = Date.now() + timeoutMs;
  while (!output.includes('Prism is listening on')) {
    if (!running() || Date.now() > deadline) {
      await stop();
      throw new Error(`prism proxy did not start within ${timeoutMs} ms:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { url: `http://127.0.0.1:${port}`, output: () => output, stop };
}

function isViolation(value: unknown): value is Violation {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    Array.isArray(v.location) &&
    v.location.every((part) => typeof part === 'string') &&
    typeof v.severity === 'string' &&
    typeof v.message === 'string'
  );
}

/** Reads an `sl-violations` header (absent: none). */
export function parseViolations(header: string | null): Violation[] {
  if (header === null) return [];
  // Prism cuts a list longer than 8 KiB and prefixes it: what is left cannot be sorted out.
  if (header.startsWith('Too many violations!')) {
    throw new Error(`prism truncated its violations: ${header.slice(0, 500)}`);
  }
  const parsed: unknown = JSON.parse(header);
  if (!Array.isArray(parsed) || !parsed.every(isViolation)) {
    throw new Error(`unexpected sl-violations header: ${header}`);
  }
  return parsed;
}

export function describeViolation(violation: Violation): string {
  return `${violation.severity} at ${violation.location.join('.')}: ${violation.message}`;
}

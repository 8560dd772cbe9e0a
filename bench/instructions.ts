/**
 * Instructions per request: the service runs under valgrind's callgrind, answers a warm-up, then a
 * fixed number of keep-alive requests counted alone (callgrind_control zeroes the counts before
 * them and dumps after). A count does not move with the neighbours' load the way CPU time does, so
 * two builds (a checkout of each) compare on a busy machine. Run:
 *
 *   npm run bench:instructions -- --scenario list --requests 1000 [--checkout ../before] [--out F]
 *
 * The checkout must be built (`npm run build`); its own CLI seeds 10,000 pets and makes an
 * enterprise key on a SQLite file of this run's own.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT } from './servers.js';

const { values } = parseArgs({
  options: {
    checkout: { type: 'string', default: ROOT },
    scenario: { type: 'string', default: 'list' },
    requests: { type: 'string', default: '1000' },
    // Keeps the callgrind dump of the counted requests (for callgrind_annotate).
    out: { type: 'string' },
  },
});
const checkout = resolve(values.checkout);
const scenario = values.scenario;
const requests = Number(values.requests);
if (!['list', 'get', 'create'].includes(scenario) || !(requests > 0)) {
  throw new Error('usage: --scenario list|get|create --requests N [--checkout DIR]');
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => done(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

function call(
  port: number,
  method: string,
  path: string,
  key: string,
  body?: string,
): Promise<{ status: number; text: string }> {
  return new Promise((done, fail) => {
    const sent = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent,
        headers: {
          authorization: `Bearer ${key}`,
          ...(body === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }),
        },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => done({ status: response.statusCode ?? 0, text }));
      },
    );
    sent.once('error', fail);
    sent.end(body);
  });
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'petstore-instructions-'));
  // The service's settings come from this run's environment (LOG_LEVEL=debug, say); its data is
  // this run's own.
  const env = { ...process.env, DATABASE_URL: `sqlite:${join(dir, 'bench.db')}` };
  const cli = (args: string[]) =>
    execFileSync('node', [join(checkout, 'dist/cli/main.js'), ...args], {
      cwd: checkout,
      env,
      encoding: 'utf8',
    });
  cli(['migrate']);
  cli(['seed', '--count', '10000']);
  const key =
    cli([
      'keys',
      'create',
      '--plan',
      'enterprise',
      '--per-minute',
      '1000000000',
      '--per-day',
      '1000000000',
    ])
      .trim()
      .split('\n')
      .at(-1) ?? '';
  const port = await freePort();
  const service: ChildProcess = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      `--callgrind-out-file=${join(dir, 'callgrind.out.%p')}`,
      'node',
      join(checkout, 'dist/main.js'),
    ],
    { cwd: checkout, env: { ...env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  service.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  service.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  try {
    // Listening when it answers (at LOG_LEVEL=warn no line says so); callgrind makes a start slow.
    const deadline = Date.now() + 600_000;
    for (;;) {
      if (service.exitCode !== null || Date.now() > deadline) {
        throw new Error(`the service did not start:\n${output}`);
      }
      const up = await call(port, 'GET', '/healthz', key).then(
        () => true,
        () => false,
      );
      if (up) break;
      await new Promise((done) => setTimeout(done, 500));
    }
    const listed = await call(port, 'GET', '/v1/pets?limit=20', key);
    const ids = [...listed.text.matchAll(/"id":(\d+)/g)].map((m) => m[1] as string);
    let n = 0;
    const one = async () => {
      n += 1;
      const answer =
        scenario === 'list'
          ? await call(port, 'GET', '/v1/pets?limit=20', key)
          : scenario === 'get'
            ? await call(port, 'GET', `/v1/pets/${ids[n % ids.length] ?? '1'}`, key)
            : await call(
                port,
                'POST',
                '/v1/pets',
                key,
                JSON.stringify({ name: `Pet ${n}`, categoryId: 1 }),
              );
      if (answer.status >= 300) throw new Error(`${scenario}: ${answer.status} ${answer.text}`);
    };
    for (let i = 0; i < 2 * requests; i++) await one();
    // The valgrind process runs the node program itself: its pid is the one to control.
    execFileSync('callgrind_control', ['-z', String(service.pid)]);
    for (let i = 0; i < requests; i++) await one();
    execFileSync('callgrind_control', ['-d', String(service.pid)]);
    // The dump asked for is numbered (callgrind.out.<pid>.1); the unnumbered file is written at exit.
    const dump = readdirSync(dir)
      .filter((name) => /^callgrind\.out\.\d+\.\d+$/.test(name))
      .map((name) => readFileSync(join(dir, name), 'utf8'))
      .at(0);
    if (values.out !== undefined && dump !== undefined) writeFileSync(values.out, dump);
    const total = Number(/^summary: (\d+)/m.exec(dump ?? '')?.[1]);
    if (!Number.isFinite(total)) throw new Error('no callgrind dump for the counted requests');
    console.log(
      JSON.stringify({ checkout, scenario, requests, perRequest: Math.round(total / requests) }),
    );
  } finally {
    service.kill('SIGKILL');
    agent.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();

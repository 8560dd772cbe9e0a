// A pipelined flood, run as a process of its own so that its writing does not slow the probes of
// whoever started it (test/process/bad-days.pipelined-flood.test.ts, issue 19 item 5;
// bench/reconnect-flood.ts, issue 34 item 8): CONNECTIONS connections from 127.0.0.3, each
// writing DEPTH keyless GETs at a time and topping up whenever the socket drains, never reading
// an answer. It prints what became of its connections as one JSON line, {opened, closedByServer},
// and exits:
// - by default, after SECONDS and once every connection is closed (or GRACE_MS more);
// - with --reconnect, a connection the server closes is opened again at once, and it ends after
//   SECONDS.
//
// Usage: node pipelined-flood-client.(ts|js) <port> <connections> <depth> <seconds> [--reconnect]
// The tests run the .ts (Node strips the types itself), the bench its build (tsconfig.bench.json).
// One file with no imports but Node's, so that both can run it as it is.
import { connect } from 'node:net';

const [port = 0, connections = 0, depth = 0, seconds = 0] = process.argv.slice(2, 6).map(Number);
const reconnect = process.argv.slice(6).includes('--reconnect');
const batch = 'GET /v1/pets HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(depth);
let opened = 0;
let closed = 0;
let stopping = false;

function open(): void {
  if (stopping) return;
  const socket = connect({ port, host: '127.0.0.1', localAddress: '127.0.0.3' });
  socket.on('error', () => undefined);
  socket.on('close', () => {
    closed += 1;
    // At once, as the attack did; a refused connect comes back here too, a little later.
    if (reconnect) setImmediate(open);
  });
  socket.on('connect', () => {
    opened += 1;
    const topUp = () => {
      while (!socket.destroyed && socket.write(batch));
    };
    topUp();
    socket.on('drain', topUp);
  });
}

const finish = () => {
  console.log(JSON.stringify({ opened, closedByServer: closed }));
  process.exit(0);
};

// A starved machine (seen in CI at 250 s a suite run) can leave the server still parsing the
// last connections' first reads when SECONDS are up: it gets up to GRACE_MS more to close them.
const GRACE_MS = 10_000;

for (let i = 0; i < connections; i++) open();
setTimeout(() => {
  stopping = true;
  // A reconnecting flood never has every connection closed: what it opened by now is the answer.
  if (reconnect) finish();
  setInterval(() => {
    if (opened === connections && closed >= connections) finish();
  }, 100);
  setTimeout(finish, GRACE_MS);
}, seconds * 1000);

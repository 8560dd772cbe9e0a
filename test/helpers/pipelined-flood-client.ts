// A pipelined flood (issue 19 item 5), run as a process of its own so that its writing does not
// slow the test's own probes: CONNECTIONS connections from 127.0.0.3, each writing DEPTH keyless
// GETs at a time and topping up whenever the socket drains, never reading an answer. After
// SECONDS (and once all are closed, or GRACE_MS more) it prints what became of its connections as
// one JSON line and exits.
//
// Usage: node pipelined-flood-client.ts <port> <connections> <depth> <seconds> (Node strips the
// types itself).
import { connect } from 'node:net';

const [port = 0, connections = 0, depth = 0, seconds = 0] = process.argv.slice(2).map(Number);
const batch = 'GET /v1/pets HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(depth);
let opened = 0;
let closed = 0;
for (let i = 0; i < connections; i++) {
  const socket = connect({ port, host: '127.0.0.1', localAddress: '127.0.0.3' });
  socket.on('error', () => undefined);
  socket.on('close', () => (closed += 1));
  socket.on('connect', () => {
    opened += 1;
    const topUp = () => {
      while (!socket.destroyed && socket.write(batch));
    };
    topUp();
    socket.on('drain', topUp);
  });
}
// A starved machine (seen in CI at 250 s a suite run) can leave the server still parsing the
// last connections' first reads when SECONDS are up: it gets up to GRACE_MS more to close them.
const GRACE_MS = 10_000;
const finish = () => {
  console.log(JSON.stringify({ opened, closedByServer: closed }));
  process.exit(0);
};
setTimeout(() => {
  setInterval(() => {
    if (opened === connections && closed >= connections) finish();
  }, 100);
  setTimeout(finish, GRACE_MS);
}, seconds * 1000);

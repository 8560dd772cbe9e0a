// A pipelined flood that reconnects after each close (issue 34 item 8), as a process of its own so
// that its writing does not slow the bench's probes: CONNECTIONS connections from 127.0.0.3, each
// writing DEPTH keyless GETs at a time and topping up whenever the socket drains, never reading an
// answer; a connection the server closes is opened again at once. After SECONDS it prints how many
// connections it opened as one JSON line and exits.
//
// Usage: node reconnect-flood-client.js <port> <connections> <depth> <seconds>
import { connect } from 'node:net';

const [port = 0, connections = 0, depth = 0, seconds = 0] = process.argv.slice(2).map(Number);
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
    setImmediate(open);
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

for (let i = 0; i < connections; i++) open();
setTimeout(() => {
  stopping = true;
  console.log(JSON.stringify({ opened, closedByServer: closed }));
  process.exit(0);
}, seconds * 1000);

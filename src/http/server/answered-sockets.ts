import type { Socket } from 'node:net';

/**
 * Connections answered on their socket (a 408, 400 or 431 written before any route could answer).
 * A request on one whose body was still arriving is never served, even when the rest of its body
 * arrives while the connection lingers: the body parser hands over no body of these. A module of
 * its own because the server (which marks them) imports what the body parser's module defines.
 */
const answered = new WeakSet<Socket>();

export function markAnsweredBeforeRoute(socket: Socket): void {
  answered.add(socket);
}

export function answeredBeforeRoute(socket: Socket): boolean {
  return answered.has(socket);
}

import { writeSync } from 'node:fs';

/** How long a write that found the pipe full waits before it tries again. */
const FULL_PIPE_WAIT_MS = 1;
const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** Writes all of `bytes` to `fd`, waiting out a full pipe; false when the reader is gone. */
function writeAll(fd: number, bytes: Buffer): boolean {
  let offset = 0;
  while (offset < bytes.length) {
    try {
      offset += writeSync(fd, bytes, offset);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EPIPE') return false;
      if (code !== 'EAGAIN' && code !== 'EBUSY') throw error;
      Atomics.wait(sleeper, 0, 0, FULL_PIPE_WAIT_MS);
    }
  }
  return true;
}

/**
 * The log's destination when standard output is not a terminal: the lines written during one turn
 * of the event loop leave in one write at the end of it. A write a line cost one system call per
 * request (the access log), a fifth of a listPets answer's CPU (`npm run bench`: 153-168 µs a
 * request, 123-129 µs batched); under load one turn answers many requests, which then share the
 * call, and a line is never held longer than the turn that logged it. Lines are written synchronously, in
 * order, and whatever is pending leaves on exit (process.exit included) and on a fatal log line
 * (pino calls flushSync). Only a process killed outright (SIGKILL, a fatal signal) loses the lines
 * of its last turn. A reader that went away (EPIPE) ends the logging, as pino does.
 */
export class BatchedLogStream {
  readonly #fd: number;
  #pending: string[] = [];
  #scheduled = false;
  #closed = false;
  readonly #flush = () => this.flushSync();

  constructor(fd: number) {
    this.#fd = fd;
    process.on('exit', this.#flush);
  }

  write(line: string): boolean {
    if (this.#closed) return true;
    this.#pending.push(line);
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(this.#flush);
    }
    return true;
  }

  flushSync(): void {
    this.#scheduled = false;
    if (this.#pending.length === 0 || this.#closed) return;
    const text = this.#pending.length === 1 ? (this.#pending[0] ?? '') : this.#pending.join('');
    this.#pending = [];
    if (!writeAll(this.#fd, Buffer.from(text, 'utf8'))) this.#closed = true;
  }
}

import { writeSync } from 'node:fs';

/** How long a write that found the pipe full waits before it tries again. */
const FULL_PIPE_WAIT_MS = 1;
const sleeper = new Int32Array(new SharedArrayBuffer(4));

/**
 * Writes all of `text` to `fd`, waiting out a full pipe; false when the reader is gone. The text
 * goes as it is (Node encodes it without a Buffer of ours); only a partial write, into a pipe
 * that filled, makes the rest into bytes.
 */
function writeAll(fd: number, text: string): boolean {
  let bytes: Buffer | undefined;
  let offset = 0;
  for (;;) {
    try {
      if (bytes === undefined) {
        const written = writeSync(fd, text);
        if (written === Buffer.byteLength(text)) return true;
        bytes = Buffer.from(text, 'utf8');
        offset = written;
      } else {
        offset += writeSync(fd, bytes, offset);
      }
      if (bytes !== undefined && offset >= bytes.length) return true;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EPIPE') return false;
      if (code !== 'EAGAIN' && code !== 'EBUSY') throw error;
      Atomics.wait(sleeper, 0, 0, FULL_PIPE_WAIT_MS);
    }
  }
}

/** How long a line may wait for others to share its write, and how much may wait. */
export interface LogBatching {
  readonly maxDelayMs: number;
  readonly maxBytes: number;
}

/**
 * 10 ms: under load a write then carries hundreds of lines; one a turn of the event loop carried
 * three or four, and its system call cost a listPets answer 2 µs (`npm run bench`). Idle, a line
 * is out 10 ms after it was logged, sooner than anyone reads it.
 */
export const DEFAULT_LOG_BATCHING: LogBatching = { maxDelayMs: 10, maxBytes: 64 * 1024 };

/**
 * The log's destination when standard output is not a terminal: lines are written together, in
 * order, at most `maxDelayMs` after the first of them was logged (or once `maxBytes` wait), so a
 * request's access line does not cost a system call of its own. Whatever is pending leaves
 * synchronously on exit (process.exit included) and on a fatal log line (pino calls flushSync).
 * Only a process killed outright (SIGKILL, a fatal signal) loses the lines of its last
 * `maxDelayMs`. A reader that went away (EPIPE) ends the logging, as pino does.
 */
export class BatchedLogStream {
  readonly #fd: number;
  readonly #batching: LogBatching;
  #pending: string[] = [];
  #pendingBytes = 0;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  readonly #flush = () => this.flushSync();

  constructor(fd: number, batching: LogBatching = DEFAULT_LOG_BATCHING) {
    this.#fd = fd;
    this.#batching = batching;
    process.on('exit', this.#flush);
  }

  write(line: string): boolean {
    if (this.#closed) return true;
    this.#pending.push(line);
    // Characters, not bytes: a bound on what waits, not an exact count.
    this.#pendingBytes += line.length;
    if (this.#pendingBytes >= this.#batching.maxBytes) this.flushSync();
    else if (this.#timer === undefined) {
      this.#timer = setTimeout(this.#flush, this.#batching.maxDelayMs);
      this.#timer.unref();
    }
    return true;
  }

  flushSync(): void {
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    if (this.#pending.length === 0 || this.#closed) return;
    const text = this.#pending.length === 1 ? (this.#pending[0] ?? '') : this.#pending.join('');
    this.#pending = [];
    this.#pendingBytes = 0;
    if (!writeAll(this.#fd, text)) this.#closed = true;
  }
}

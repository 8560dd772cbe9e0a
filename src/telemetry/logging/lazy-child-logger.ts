import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions, LogFn } from 'pino';

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * A request's logger that becomes a real child of the process's logger only when something logs
 * through it. Fastify makes one per request; most requests log nothing through theirs (the access
 * line is written apart, src/http/plugins/access-log.plugin.ts), and pino's child cost more than
 * the rest of such a request's logging.
 */
export class LazyChildLogger implements FastifyBaseLogger {
  #child: FastifyBaseLogger | undefined;

  // The log methods live on the prototype (the static block): none is allocated per request.
  declare readonly fatal: LogFn;
  declare readonly error: LogFn;
  declare readonly warn: LogFn;
  declare readonly info: LogFn;
  declare readonly debug: LogFn;
  declare readonly trace: LogFn;
  declare readonly silent: LogFn;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  #real(): FastifyBaseLogger {
    this.#child ??= this.parent.child(this.bindings, this.options);
    return this.#child;
  }

  get level(): string {
    return this.#child?.level ?? this.options.level ?? this.parent.level;
  }

  set level(level: string) {
    this.#real().level = level;
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#real().child(bindings, options);
  }

  static {
    for (const level of LEVELS) {
      Object.defineProperty(this.prototype, level, {
        value(this: LazyChildLogger, ...args: unknown[]) {
          (this.#real()[level] as (...a: unknown[]) => void)(...args);
        },
      });
    }
  }
}

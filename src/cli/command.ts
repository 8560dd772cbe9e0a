import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { StoreServices } from '../services.js';

/** The part of a stream the CLI needs; process.stdout fits, and so does a string collector in tests. */
export interface Output {
  write(text: string): unknown;
}

export interface CommandContext {
  /** The same services the server builds, from the same configuration. */
  readonly services: StoreServices;
  /** Only what a script may want to capture: a new key, the key list, help. */
  readonly stdout: Output;
  /** Everything meant for the person at the terminal. */
  readonly stderr: Output;
  /** Standard input, for a command that reads a file named `-`. */
  readonly stdin: AsyncIterable<string | Buffer>;
}

export type Run = (context: CommandContext) => Promise<void>;
/** What a remote command may read besides its arguments: secrets stay off the command line. */
export interface RemoteInput {
  /** The process's environment (a test passes its own). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Standard input, for a secret piped in (`--key -`). */
  readonly stdin: AsyncIterable<string | Buffer>;
}

/** The work of a command that talks to a deployment over HTTP and opens nothing locally. */
export type RemoteRun = (
  io: { readonly stdout: Output; readonly stderr: Output } & RemoteInput,
) => Promise<void>;

interface CommandBase {
  /** The words that select it, e.g. "keys create". */
  readonly name: string;
  readonly summary: string;
  /** Usage line(s) and option descriptions, printed by --help. */
  readonly help: string;
  /** Exit status of a usage error: 1 unless the command gives 1 another meaning (`check`: 2). */
  readonly usageStatus?: number;
}

/**
 * `petstore check` judges a deployment, not this machine's database: no configuration is read
 * and nothing is opened, so it runs anywhere the CLI is installed.
 */
export interface RemoteCommand extends CommandBase {
  readonly kind: 'remote';
  prepare(args: string[]): RemoteRun;
}

export type Command = LocalCommand | RemoteCommand;

export interface LocalCommand extends CommandBase {
  readonly kind?: 'local';
  /** `migrate` opens the database as it is, so that it can apply and report the migrations itself. */
  readonly migrateOnOpen: boolean;
  /** The command reads a database that must exist: a missing SQLite file is refused, not created. */
  readonly needsExistingDatabase?: boolean;
  /**
   * Checks the arguments and returns the work to do. It runs before the configuration is read and
   * the database opened, so a typo costs nothing and never touches data.
   */
  prepare(args: string[]): Run;
}

/** The command was called wrongly: one line naming the problem, a pointer to --help, exit 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** The command was called correctly but cannot do its job (e.g. a full disk): one line, exit 1. */
export class CommandError extends Error {
  override name = 'CommandError';
}

type Options = NonNullable<ParseArgsConfig['options']>;

function errorCode(error: unknown): string | undefined {
  if (!(error instanceof Error) || !('code' in error)) return undefined;
  return typeof error.code === 'string' ? error.code : undefined;
}

/**
 * Node's parseArgs messages are written for programmers and some span three lines; a user of the CLI
 * gets one short line naming the option.
 */
function reword(error: Error & { code: string }): UsageError {
  const option = /'(-[^' ,]*)/.exec(error.message)?.[1] ?? '';
  const firstLine = error.message.split('\n')[0] ?? error.message;
  switch (error.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return new UsageError(`unknown option ${option}`);
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL': {
      const argument = /argument '(.*)'/.exec(firstLine)?.[1] ?? '';
      return new UsageError(`unexpected argument ${JSON.stringify(argument)}`);
    }
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      if (firstLine.includes('ambiguous')) {
        return new UsageError(
          `${option} needs a value (write ${option}=VALUE for a value that starts with "-")`,
        );
      }
      if (firstLine.includes('does not take an argument')) {
        return new UsageError(`${option} takes no value`);
      }
      return new UsageError(`${option} needs a value`);
    default:
      return new UsageError(firstLine);
  }
}

/** node:util parseArgs in strict mode, with its errors turned into UsageErrors. */
export function parseCommandArgs<T extends Options>(
  args: string[],
  options: T,
  allowPositionals = false,
) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals });
  } catch (error) {
    const code = errorCode(error);
    if (error instanceof Error && code?.startsWith('ERR_PARSE_ARGS') === true) {
      throw reword(Object.assign(error, { code }));
    }
    throw error;
  }
}

/** A whole number in 1..max written in plain digits; "1e3", "1.0" and "-1" are refused. */
export function positiveInteger(option: string, value: string, max: number): number {
  const n = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!(n >= 1 && n <= max)) {
    throw new UsageError(
      `${option} must be a whole number from 1 to ${max.toLocaleString('en-US')} (got ${JSON.stringify(value)})`,
    );
  }
  return n;
}

/** The single <keyId> argument of `keys revoke` and `keys unban`. */
export function keyIdArgument(args: string[]): string {
  const { positionals } = parseCommandArgs(args, {}, true);
  const [id, ...extra] = positionals;
  if (id === undefined || id === '') {
    throw new UsageError('a key id is required (the key_... column of petstore keys list)');
  }
  if (extra.length > 0) {
    throw new UsageError(`one key id at a time, please (got ${positionals.length})`);
  }
  return notASecret(id, 'key id', 'key_... column of petstore keys list');
}

/**
 * A secret (an API key or admin token) pasted where an id belongs is refused without being
 * printed back: an error message lands in scrollback, CI logs and support tickets.
 */
export function notASecret(id: string, what: string, where: string): string {
  if (/pa_(live|test|admin)_/i.test(id)) {
    throw new UsageError(
      `that is a secret, not a ${what} (not shown here); give the ${where}, and if the secret was exposed, roll or revoke it`,
    );
  }
  return id;
}

/**
 * A command that acts on one key, named by its id (`keys revoke`, `keys unban`): `act` resolves
 * false when no such key exists, and `done` says what happened.
 */
export function keyIdCommand(spec: {
  name: string;
  summary: string;
  help: readonly string[];
  /** Throws the domain's key_not_found for an unknown id. */
  act: (services: StoreServices, id: string) => Promise<unknown>;
  /** What the key was before, when the message depends on it. */
  before?: (services: StoreServices, id: string) => Promise<unknown>;
  done: (id: string, before: unknown) => string;
}): Command {
  return {
    name: spec.name,
    summary: spec.summary,
    help: [
      `Usage: petstore ${spec.name} <keyId>`,
      '',
      'The key id is the first column of `petstore keys list` (key_...), not the key itself.',
      ...spec.help,
    ].join('\n'),
    migrateOnOpen: true,
    prepare(args) {
      const id = keyIdArgument(args);
      return async ({ services, stderr }) => {
        const before = await spec.before?.(services, id);
        await spec.act(services, id);
        stderr.write(`${spec.done(id, before)}\n`);
      };
    },
  };
}

import { Readable } from 'node:stream';
import { BUILD_VERSION } from '../build-info.js';
import { type Config, ConfigError, loadConfigFromProcess } from '../config/config.js';
import { processUrlSecrets, redactSecrets, urlSecrets } from '../config/redact.js';
import type { Clock } from '../domain/clock.js';
import { DomainError } from '../domain/errors.js';
import type { StoreServices } from '../services.js';
import {
  type Command,
  CommandError,
  type LocalCommand,
  type Output,
  type RemoteCommand,
  type RemoteRun,
  type Run,
  UsageError,
} from './command.js';
import { cliAuditLog } from './audit-lines.js';
import { check } from './commands/check.js';
import { adminTokensCreate } from './commands/admin-tokens-create.js';
import { adminTokensList } from './commands/admin-tokens-list.js';
import { adminTokensRevoke } from './commands/admin-tokens-revoke.js';
import { backup } from './commands/backup.js';
import { cacheReset } from './commands/cache-reset.js';
import { keysAudit } from './commands/keys-audit.js';
import { keysCreate } from './commands/keys-create.js';
import { keysList } from './commands/keys-list.js';
import { keysRevoke } from './commands/keys-revoke.js';
import { keysReplayRevocations } from './commands/keys-replay-revocations.js';
import { keysRoll } from './commands/keys-roll.js';
import { keysSetExpiry } from './commands/keys-set-expiry.js';
import { keysSetPlan } from './commands/keys-set-plan.js';
import { keysSetScopes } from './commands/keys-set-scopes.js';
import { keysUnban } from './commands/keys-unban.js';
import { keysUsage } from './commands/keys-usage.js';
import { migrate } from './commands/migrate.js';
import { seed } from './commands/seed.js';

export interface CliIo {
  stdout: Output;
  stderr: Output;
  /** Tests pass one; the binary leaves it out and the environment is read, as the server does. */
  config?: Config;
  /** Tests pass their clock, so bans and revocations line up with a server's moved time. */
  clock?: Clock;
  /** The environment and standard input a remote command reads (`check`'s API key); none if absent. */
  env?: Readonly<Record<string, string | undefined>>;
  stdin?: AsyncIterable<string | Buffer>;
}

const COMMANDS: readonly Command[] = [
  keysCreate,
  keysList,
  keysSetPlan,
  keysSetScopes,
  keysSetExpiry,
  keysRoll,
  keysRevoke,
  keysUnban,
  adminTokensCreate,
  adminTokensList,
  adminTokensRevoke,
  keysUsage,
  keysAudit,
  keysReplayRevocations,
  seed,
  migrate,
  backup,
  check,
  cacheReset,
];
const HELP_FLAGS = new Set(['--help', '-h']);

/**
 * Exit statuses, as CLIs conventionally use them (BSD sysexits, GNU tools): 2 when the command was
 * called wrongly (nothing was done), 1 when a correct call failed while running.
 */
export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

/** The package's version, from package.json beside src/ and dist/. */
function overview(commands: readonly Command[]): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    'petstore: API keys and data of the Pet Adoption Service',
    '',
    'Usage: petstore <command> [options]',
    '',
    'Commands:',
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Run petstore <command> --help for the options of one command; petstore --version.',
    'Exit status: 0 done, 1 failed while running, 2 called wrongly (see --help).',
    '(Through npx, which keeps a leading --help for itself: npx --no petstore help.)',
    'Uses the same DATABASE_URL and PETSTORE_ENV as the server (default sqlite:./data/petstore.db).',
    '',
  ].join('\n');
}

function find(words: readonly string[]): { command: Command; args: string[] } | undefined {
  for (const command of COMMANDS) {
    const name = command.name.split(' ');
    if (name.every((word, i) => words[i] === word)) {
      return { command, args: words.slice(name.length) };
    }
  }
  return undefined;
}

/** Commands sharing a first word, e.g. every "keys ..." command for `petstore keys`. */
function group(word: string | undefined): Command[] {
  return COMMANDS.filter((c) => c.name.split(' ')[0] === word && c.name.includes(' '));
}

/** --help anywhere before a `--` asks for help, even beside arguments that would not parse. */
function asksForHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((arg) => HELP_FLAGS.has(arg));
}

function errorMessage(error: unknown, config: Config | undefined): string {
  const verbose = config?.logLevel === 'debug' || config?.logLevel === 'trace';
  if (verbose && error instanceof Error && error.stack !== undefined) return error.stack;
  return error instanceof Error ? error.message : String(error);
}

/** `petstore keys` alone shows the keys commands on request, and otherwise says what is missing. */
function unknownCommand(words: readonly string[], helpAsked: boolean, io: CliIo): number {
  const [first = '', second] = words;
  const commands = group(first);
  let problem: string;
  if (commands.length > 0) {
    if (helpAsked || asksForHelp(words.slice(1))) {
      io.stdout.write(overview(commands));
      return 0;
    }
    problem =
      second === undefined || second.startsWith('-')
        ? `${first} needs a subcommand: ${commands.map((c) => c.name.split(' ')[1]).join(', ')}`
        : `unknown command ${JSON.stringify(`${first} ${second}`)}`;
  } else {
    problem = first.startsWith('-')
      ? `unknown option ${first}`
      : `unknown command ${JSON.stringify(first)}`;
  }
  io.stderr.write(`petstore: ${problem}; see petstore --help\n`);
  return EXIT.usage;
}

/**
 * Runs one petstore command and resolves with its exit status. It never throws, and it always
 * closes the storage it opened, so the binary only has to hand over argv and streams.
 */
export async function runCli(argv: readonly string[], given: CliIo): Promise<number> {
  const io = withoutSecrets(given);
  const { stdout, stderr } = io;
  const [first] = argv;

  if (first === undefined) {
    stderr.write(overview(COMMANDS));
    return EXIT.usage;
  }
  if (first === '--version' || first === '-V') {
    // package.json's version, the one /version and petstore_build_info report.
    stdout.write(`${BUILD_VERSION}\n`);
    return EXIT.ok;
  }
  if (HELP_FLAGS.has(first) || (first === 'help' && argv.length === 1)) {
    stdout.write(overview(COMMANDS));
    return 0;
  }
  // `petstore help keys create` is another way to write `petstore keys create --help`.
  const helpTopic = first === 'help' ? argv.slice(1) : undefined;
  const words = helpTopic ?? argv;
  const found = find(words);
  if (found === undefined) return unknownCommand(words, helpTopic !== undefined, io);

  const { command, args } = found;
  if (helpTopic !== undefined || asksForHelp(args)) {
    stdout.write(`${command.summary}\n\n${command.help}\n`);
    return 0;
  }

  // Arguments are checked before anything is opened or sent, so a typo costs nothing.
  let start: () => Promise<number>;
  try {
    if (command.kind === 'remote') {
      const run = command.prepare(args);
      start = () => runRemote(command, run, io);
    } else {
      const run = command.prepare(args);
      start = () => runLocal(command, run, io);
    }
  } catch (error) {
    if (error instanceof UsageError) {
      stderr.write(
        `petstore ${command.name}: ${error.message}; see petstore ${command.name} --help\n`,
      );
      return command.usageStatus ?? EXIT.usage;
    }
    stderr.write(`petstore ${command.name}: failed: ${errorMessage(error, io.config)}\n`);
    return EXIT.failure;
  }
  return start();
}

/**
 * The IO with the passwords of DATABASE_URL and REDIS_URL masked in all it writes, whichever
 * command or driver error quotes them (config/redact.ts).
 */
function withoutSecrets(io: CliIo): CliIo {
  const secrets = urlSecrets({
    DATABASE_URL: io.config?.database.kind === 'postgres' ? io.config.database.url : undefined,
    REDIS_URL: io.config?.redis?.url,
  })
    .concat(processUrlSecrets())
    .sort((a, b) => b.length - a.length);
  const masked = (output: Output): Output => ({
    write: (text: string) => output.write(redactSecrets(text, secrets)),
  });
  return { ...io, stdout: masked(io.stdout), stderr: masked(io.stderr) };
}

/** A command on the DATABASE_URL storage, through the same services as the server. */
async function runLocal(command: LocalCommand, run: Run, io: CliIo): Promise<number> {
  const { stdout, stderr } = io;

  let config = io.config;
  let services: StoreServices | undefined;
  let status = 0;
  try {
    config ??= loadConfigFromProcess();
    // Loaded here, not with this module: help, --version, a usage error and `check` open no
    // storage and need none of the services' modules. No metrics: a command reports none.
    const { createStoreServices } = await import('../services.js');
    services = await createStoreServices(config, {
      migrate: command.migrateOnOpen,
      mustExist: command.needsExistingDatabase === true,
      // Passed on only when a test gave one: a clock passed in replaces the database's and Redis's
      // shared clocks, and this host's may be wrong (createStoreServices).
      ...(io.clock ? { clock: io.clock } : {}),
      auditLog: cliAuditLog(config.auditLogFile, stderr),
    });
    await run({ services, stdout, stderr, stdin: io.stdin ?? Readable.from([]) });
  } catch (error) {
    status = EXIT.failure;
    if (error instanceof ConfigError) {
      stderr.write(`petstore: ${error.message}\n`);
    } else if (error instanceof UsageError || isInputRefusal(error)) {
      status = EXIT.usage;
      stderr.write(`petstore ${command.name}: ${error.message}\n`);
    } else if (error instanceof CommandError || error instanceof DomainError) {
      // A refusal of the domain (no such key, ...): its message is written for people.
      const hint =
        error instanceof DomainError && error.code === 'key_not_found'
          ? ' (see petstore keys list)'
          : '';
      stderr.write(`petstore ${command.name}: ${error.message}${hint}\n`);
    } else {
      stderr.write(`petstore ${command.name}: failed: ${errorMessage(error, config)}\n`);
    }
  }
  try {
    await services?.close();
  } catch (error) {
    stderr.write(
      `petstore ${command.name}: closing the database failed: ${errorMessage(error, config)}\n`,
    );
    status = EXIT.failure;
  }
  return status;
}

async function runRemote(command: RemoteCommand, run: RemoteRun, io: CliIo): Promise<number> {
  try {
    await run({
      stdout: io.stdout,
      stderr: io.stderr,
      env: io.env ?? {},
      stdin: io.stdin ?? Readable.from([]),
    });
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(
        `petstore ${command.name}: ${error.message}; see petstore ${command.name} --help\n`,
      );
      return command.usageStatus ?? EXIT.usage;
    }
    if (error instanceof CommandError) {
      io.stderr.write(`petstore ${command.name}: ${error.message}\n`);
    } else {
      io.stderr.write(`petstore ${command.name}: failed: ${errorMessage(error, io.config)}\n`);
    }
    return EXIT.failure;
  }
}

/** The domain refused what was asked for as invalid input: the call was wrong, not the run. */
function isInputRefusal(error: unknown): error is DomainError {
  return (
    error instanceof DomainError &&
    (error.code === 'invalid_body' || error.code === 'invalid_parameter')
  );
}

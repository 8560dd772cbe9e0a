import { type Config, ConfigError, loadConfigFromProcess } from '../config/config.js';
import type { Storage } from '../domain/ports.js';
import { createStorage } from '../storage/create-storage.js';
import { type Command, type Output, UsageError } from './cli-context.js';
import { migrate, seed } from './commands/data.js';
import { keysCreate, keysList, keysRevoke, keysUnban } from './commands/keys.js';

const COMMANDS: readonly Command[] = [keysCreate, keysList, keysRevoke, keysUnban, seed, migrate];

function help(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    'petstore: manage API keys and data of the Pet Adoption Service',
    '',
    'Usage: petstore <command> [options]   (petstore <command> --help for its options)',
    '',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Uses the same DATABASE_URL (and PETSTORE_ENV) as the server.',
    '',
  ].join('\n');
}

function find(argv: string[]): { command: Command; args: string[] } | undefined {
  for (const command of COMMANDS) {
    const words = command.name.split(' ');
    if (words.every((word, i) => argv[i] === word))
      return { command, args: argv.slice(words.length) };
  }
  return undefined;
}

/** Runs one command and returns its exit status; never throws. */
export async function runCli(
  argv: string[],
  io: { stdout: Output; stderr: Output; config?: Config },
): Promise<number> {
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    io.stdout.write(help());
    return argv.length === 0 ? 1 : 0;
  }
  const found = find(argv);
  if (found === undefined) {
    io.stderr.write(`petstore: unknown command "${argv.join(' ')}"; see petstore --help\n`);
    return 1;
  }
  const { command, args } = found;
  if (args.includes('--help') || args.includes('-h')) {
    io.stdout.write(`${command.summary}\n\nUsage: ${command.usage}\n`);
    return 0;
  }
  let storage: Storage | undefined;
  let config: Config | undefined = io.config;
  try {
    config ??= loadConfigFromProcess();
    const opened = config.database;
    return await command.run(args, {
      config,
      stdout: io.stdout,
      stderr: io.stderr,
      storage: async () =>
        (storage ??= await createStorage(opened, { migrate: command !== migrate })),
    });
  } catch (error) {
    if (error instanceof UsageError || error instanceof ConfigError) {
      io.stderr.write(
        `petstore ${command.name}: ${error.message}; see petstore ${command.name} --help\n`,
      );
    } else if (
      error instanceof TypeError &&
      'code' in error &&
      String(error.code).startsWith('ERR_PARSE_ARGS')
    ) {
      // node:util parseArgs: unknown option, missing value, unexpected argument.
      io.stderr.write(
        `petstore ${command.name}: ${error.message}; see petstore ${command.name} --help\n`,
      );
    } else {
      const detail =
        config?.logLevel === 'debug' && error instanceof Error
          ? error.stack
          : String(error instanceof Error ? error.message : error);
      io.stderr.write(`petstore ${command.name}: failed: ${detail}\n`);
    }
    return 1;
  } finally {
    await storage?.close();
  }
}

import { describe, expect, it } from 'vitest';
import { petstore, useTempDatabases } from './cli-harness.js';

const tempDatabase = useTempDatabases();
const COMMANDS = [
  'keys create',
  'keys list',
  'keys revoke',
  'keys unban',
  'seed',
  'migrate',
  'backup',
];

describe('petstore --help', () => {
  it.each([[['--help']], [['-h']], [['help']]])(
    'prints every command to stdout and exits 0 for %j',
    async (argv) => {
      const result = await petstore(tempDatabase(), argv);

      expect(result.code).toBe(0);
      expect(result.stderr).toBe('');
      expect(result.stdout).toContain('Usage: petstore <command> [options]');
      for (const command of COMMANDS) expect(result.stdout).toContain(`  ${command} `);
    },
  );

  it.each(COMMANDS.map((command) => [command]))(
    'prints the usage of %s for --help and -h',
    async (command) => {
      for (const flag of ['--help', '-h']) {
        const result = await petstore(tempDatabase(), [...command.split(' '), flag]);

        expect(result.code).toBe(0);
        expect(result.stderr).toBe('');
        expect(result.stdout).toContain(`Usage: petstore ${command}`);
      }
    },
  );

  it('documents every option of keys create', async () => {
    const result = await petstore(tempDatabase(), ['keys', 'create', '--help']);

    for (const option of ['--plan', '--per-minute', '--per-day', '--name']) {
      expect(result.stdout).toContain(option);
    }
    expect(result.stdout).toContain('free|pro|business|enterprise');
  });

  it('prints help even beside arguments that would not parse', async () => {
    const result = await petstore(tempDatabase(), ['keys', 'create', '--plan', 'gold', '--help']);

    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Usage: petstore keys create');
  });

  it('treats petstore help <command> like <command> --help', async () => {
    const result = await petstore(tempDatabase(), ['help', 'seed']);

    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Usage: petstore seed --count N');
  });

  it('lists only the keys commands for petstore keys --help', async () => {
    const result = await petstore(tempDatabase(), ['keys', '--help']);

    expect(result.code).toBe(0);
    expect(result.stdout).toContain('keys revoke');
    expect(result.stdout).not.toContain('  seed ');
  });

  it('prints the overview to stderr and exits 2 when no command is given', async () => {
    const result = await petstore(tempDatabase(), []);

    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('Usage: petstore <command> [options]');
  });
});

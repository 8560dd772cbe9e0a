import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createKey, lines, petstore, useTempDatabases } from './cli-harness.js';

const tempDatabase = useTempDatabases();

describe('petstore called wrongly', () => {
  it.each([
    [['fly'], 'petstore: unknown command "fly"; see petstore --help'],
    [['--colour'], 'petstore: unknown option --colour; see petstore --help'],
    [['keys', 'set-plan', 'key_a'], '--plan is required'],
    [['keys', 'set-plan', '--plan', 'pro'], 'a key id is required'],
    [
      ['keys', 'set-plan', 'key_a', '--plan', 'enterprise', '--per-minute', '10', '--per-day', '9'],
      '--per-minute must be at most --per-day (9); got 10',
    ],
    [
      ['keys', 'create', '--plan', 'enterprise', '--per-minute', '10', '--per-day', '9'],
      '--per-minute must be at most --per-day (9); got 10',
    ],
    [['keys', 'create', '--plan', 'free', '--expires-in', '3w'], '--expires-in must be a duration'],
    [['keys', 'create', '--plan', 'free', '--expires-at', '2027-01-31'], 'must be an RFC 3339'],
    [['keys', 'create', '--plan', 'free', '--expires-in', '1d', '--expires-at', 'x'], 'not both'],
    [['keys', 'set-expiry', 'key_a'], 'expected a key id and a time (or never)'],
    [['keys', 'set-expiry', 'key_a', 'tomorrow'], 'must be an RFC 3339 time'],
    [['keys', 'roll', 'key_a', '--grace', '-1'], '--grace needs a value'],
    [['keys', 'roll', 'key_a', '--grace', '1y'], '--grace must be a duration'],
    [['keys', 'usage', 'key_a', '--days', '0'], '--days must be a whole number'],
    [['keys', 'audit', 'key_a', 'key_b'], 'at most one key id'],
    [['keys', 'audit', '--since', 'yesterday'], '--since must be an RFC 3339 time'],
    [
      ['keys'],
      'petstore: keys needs a subcommand: create, list, set-plan, set-scopes, set-expiry, roll, revoke, unban, usage, audit, replay-revocations',
    ],
    [['keys', 'rotate'], 'petstore: unknown command "keys rotate"'],
    [['help', 'fly'], 'unknown command "fly"'],
    [['keys', 'create'], '--plan is required: one of free, pro, business, enterprise'],
    [
      ['keys', 'create', '--plan', 'gold'],
      '--plan must be one of free, pro, business, enterprise (got "gold")',
    ],
    [['keys', 'create', '--plan', 'free', '--colour', 'red'], 'unknown option --colour'],
    [['keys', 'create', '--plan'], '--plan needs a value'],
    [['keys', 'create', '--plan', '--name', 'x'], '--plan needs a value (write --plan=VALUE'],
    [['keys', 'create', '--plan', 'free', 'extra'], 'unexpected argument "extra"'],
    [
      ['keys', 'create', '--plan', 'enterprise'],
      '--plan enterprise needs both --per-minute N and --per-day N',
    ],
    [
      ['keys', 'create', '--plan', 'enterprise', '--per-minute', '5'],
      'needs both --per-minute N and --per-day N',
    ],
    [
      ['keys', 'create', '--plan', 'free', '--per-minute', '5', '--per-day', '9'],
      '--per-minute and --per-day are only for --plan enterprise',
    ],
    [['keys', 'create', '--plan', 'pro', '--per-day', '9'], 'only for --plan enterprise'],
    [
      ['keys', 'create', '--plan', 'enterprise', '--per-minute', '0', '--per-day', '9'],
      '--per-minute must be a whole number from 1 to 1,000,000,000 (got "0")',
    ],
    [
      ['keys', 'create', '--plan', 'enterprise', '--per-minute', '5', '--per-day', '1.5'],
      '--per-day must be a whole number',
    ],
    [
      ['keys', 'create', '--plan', 'enterprise', '--per-minute=-5', '--per-day', '9'],
      '--per-minute must be a whole number',
    ],
    [['keys', 'list', 'all'], 'unexpected argument "all"'],
    [['keys', 'list', '--all'], 'unknown option --all'],
    [['keys', 'revoke'], 'a key id is required'],
    [['keys', 'revoke', 'key_a', 'key_b'], 'one key id at a time'],
    [['keys', 'unban'], 'a key id is required'],
    [['keys', 'unban', '--force', 'key_a'], 'unknown option --force'],
    [['seed'], '--count N is required'],
    [['seed', '--count', 'ten'], '--count must be a whole number from 1 to 1,000,000 (got "ten")'],
    [['seed', '--count', '0'], '--count must be a whole number'],
    [['seed', '--count', '1e3'], '--count must be a whole number'],
    [['seed', '--count', '1000001'], '--count must be a whole number'],
    [['seed', '--count'], '--count needs a value'],
    [['migrate', '--down'], 'unknown option --down'],
    [['migrate', 'now'], 'unexpected argument "now"'],
    [['backup'], 'the file to write is required'],
    [['backup', 'a.db', 'b.db'], 'one file at a time, please (got 2)'],
    [['backup', '--overwrite', 'a.db'], 'unknown option --overwrite'],
    [['backup', '--force=yes', 'a.db'], '--force takes no value'],
  ])('exits 2 with one line on stderr for %j', async (argv, message) => {
    const result = await petstore(tempDatabase(), argv);

    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(lines(result.stderr)).toHaveLength(1);
    expect(result.stderr).toContain(message);
    expect(result.stderr).toMatch(/; see petstore ([\w-]+ )*--help\n$/);
  });

  it.each([
    ['keys', 'revoke'],
    ['keys', 'unban'],
    ['keys', 'roll'],
    ['keys', 'usage'],
    ['keys', 'set-plan', '--plan', 'pro'],
    ['keys', 'set-expiry', 'SECRET', 'never'],
    ['keys', 'audit'],
    ['admin-tokens', 'revoke'],
  ])('refuses a secret pasted where an id belongs, without printing it: %j', async (...argv) => {
    for (const secret of [`pa_live_${'A1b2C3'.repeat(6)}`, `pa_admin_${'z9Y8x7'.repeat(6)}`]) {
      const args = argv.includes('SECRET')
        ? argv.map((a) => (a === 'SECRET' ? secret : a))
        : [...argv, secret];
      const result = await petstore(tempDatabase(), args);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('that is a secret, not a');
      expect(result.stdout + result.stderr).not.toContain(secret.slice(9));
    }
  });

  it('names the command in the --help pointer of a command', async () => {
    const result = await petstore(tempDatabase(), ['seed', '--count', 'ten']);

    expect(result.stderr).toBe(
      'petstore seed: --count must be a whole number from 1 to 1,000,000 (got "ten"); see petstore seed --help\n',
    );
  });

  it('does not open or create the database when the arguments are wrong', async () => {
    const db = tempDatabase();

    await petstore(db, ['keys', 'create', '--plan', 'gold']);

    expect(existsSync(db.slice('sqlite:'.length))).toBe(false);
  });

  it('prints the version of package.json for --version, exit 0', async () => {
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    const result = await petstore(tempDatabase(), ['--version']);
    expect(result).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
  });

  it('exits 2 when the domain refuses the input at run time (more days than are kept)', async () => {
    const db = tempDatabase();
    const { id } = await createKey(db);
    const result = await petstore(db, ['keys', 'usage', id, '--days', '91']);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('petstore keys usage: days must be a whole number from 1 to 90\n');
  });

  it.each([
    ['revoke', []],
    ['unban', []],
    ['set-plan', ['--plan', 'pro']],
    ['set-expiry', ['never']],
    ['roll', []],
    ['usage', []],
  ])('exits 1 when keys %s is given an unknown id', async (verb, rest) => {
    const db = tempDatabase();
    await createKey(db);

    const result = await petstore(db, ['keys', verb, 'key_missing', ...rest]);

    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      `petstore keys ${verb}: No API key has the id "key_missing" (see petstore keys list)\n`,
    );
  });
});

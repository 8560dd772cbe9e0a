import { PLAN_LIMITS } from '../../domain/rate-limits/plans.js';
import { type Command, parseCommandArgs, UsageError } from '../command.js';
import { describeView } from '../describe.js';
import { cliActor, duration, planChangeOf, rfc3339, scopesOf } from '../key-options.js';

export const keysCreate: Command = {
  name: 'keys create',
  summary: 'issue a new API key; it is printed once, alone on the last line of stdout',
  help: [
    'Usage: petstore keys create --plan free|pro|business|enterprise [--name LABEL]',
    '       petstore keys create --plan enterprise --per-minute N --per-day N [--name LABEL]',
    '       ... [--expires-at TIME | --expires-in DURATION] [--scopes pets:read[,pets:write]]',
    '',
    'Options:',
    '  --plan PLAN        one of:',
    // From the plan table itself, so the help cannot drift from the limits in force.
    ...Object.entries(PLAN_LIMITS).map(
      ([plan, { perMinute, perDay }]) =>
        `                       ${plan.padEnd(10)} ${perMinute}/min, ${perDay}/day`,
    ),
    '                       enterprise limits agreed per key (--per-minute, --per-day)',
    '  --per-minute N     enterprise only, required: requests per minute (at most --per-day)',
    '  --per-day N        enterprise only, required: requests per day',
    '  --name LABEL       a label to recognise the key by in `petstore keys list`',
    '  --expires-at TIME  the key is refused (401 api_key_expired) from this RFC 3339 time',
    '  --expires-in DUR   the same, this long from now: 90d, 12h, 30m',
    '  --scopes LIST      what the key may do, a comma list: pets:read (list and read pets),',
    '                     pets:write (create pets); both when not given',
    '',
    'The key goes to stdout and nothing else does, so `KEY=$(petstore keys create ...)` works.',
    'Only its hash is stored: it cannot be shown again.',
  ].join('\n'),
  migrateOnOpen: true,
  prepare(args) {
    const { values } = parseCommandArgs(args, {
      plan: { type: 'string' },
      'per-minute': { type: 'string' },
      'per-day': { type: 'string' },
      name: { type: 'string' },
      'expires-at': { type: 'string' },
      'expires-in': { type: 'string' },
      scopes: { type: 'string' },
    });
    const scopes = values.scopes === undefined ? undefined : scopesOf('--scopes', values.scopes);
    const change = planChangeOf(values);
    const name = values.name ?? '';
    if (values['expires-at'] !== undefined && values['expires-in'] !== undefined) {
      throw new UsageError('give --expires-at or --expires-in, not both');
    }
    const at = values['expires-at'] && rfc3339('--expires-at', values['expires-at']);
    const inMs = values['expires-in'] && duration('--expires-in', values['expires-in'], false);

    return async ({ services, stdout, stderr }) => {
      const now = services.clock.now();
      const expiresAt = typeof at === 'number' ? at : typeof inMs === 'number' ? now + inMs : null;
      const { key, secret } = await services.keys.create(
        { change, name, expiresAt, ...(scopes ? { scopes } : {}) },
        cliActor(),
      );
      stderr.write(
        [
          `Created API key ${key.id}${name === '' ? '' : ` (${JSON.stringify(name)})`}`,
          `  plan: ${describeView(key)}`,
          `  scopes: ${key.scopes.join(',')}`,
          ...(key.expiresAt === null ? [] : [`  expires: ${key.expiresAt}`]),
          'This is the only time the key is shown: copy it now (it is the last line of stdout).',
          '',
        ].join('\n'),
      );
      stdout.write(`${secret}\n`);
    };
  },
};

import {
  type CustomLimitsProblem,
  customLimitsProblem,
  isPlan,
  type Limits,
  MAX_CUSTOM_LIMIT,
  type Plan,
  PLAN_LIMITS,
  PLANS,
} from '../../domain/rate-limits/plans.js';
import { type Command, parseCommandArgs, positiveInteger, UsageError } from '../command.js';
import { describePlan } from '../describe.js';

const PROBLEMS: Record<CustomLimitsProblem, string> = {
  only_for_enterprise: '--per-minute and --per-day are only for --plan enterprise',
  enterprise_needs_both: '--plan enterprise needs both --per-minute N and --per-day N',
};

function customLimits(
  plan: Plan,
  perMinute: string | undefined,
  perDay: string | undefined,
): Limits | undefined {
  const problem = customLimitsProblem(plan, { perMinute, perDay });
  if (problem !== undefined) throw new UsageError(PROBLEMS[problem]);
  if (perMinute === undefined || perDay === undefined) return undefined;
  return {
    perMinute: positiveInteger('--per-minute', perMinute, MAX_CUSTOM_LIMIT),
    perDay: positiveInteger('--per-day', perDay, MAX_CUSTOM_LIMIT),
  };
}

export const keysCreate: Command = {
  name: 'keys create',
  summary: 'issue a new API key; it is printed once, alone on the last line of stdout',
  help: [
    'Usage: petstore keys create --plan free|pro|business|enterprise [--name LABEL]',
    '       petstore keys create --plan enterprise --per-minute N --per-day N [--name LABEL]',
    '',
    'Options:',
    '  --plan PLAN        one of:',
    // From the plan table itself, so the help cannot drift from the limits in force.
    ...Object.entries(PLAN_LIMITS).map(
      ([plan, { perMinute, perDay }]) =>
        `                       ${plan.padEnd(10)} ${perMinute}/min, ${perDay}/day`,
    ),
    '                       enterprise limits agreed per key (--per-minute, --per-day)',
    '  --per-minute N     enterprise only, required: requests per minute',
    '  --per-day N        enterprise only, required: requests per day',
    '  --name LABEL       a label to recognise the key by in `petstore keys list`',
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
    });
    if (values.plan === undefined) {
      throw new UsageError(`--plan is required: one of ${PLANS.join(', ')}`);
    }
    const plan = values.plan;
    if (!isPlan(plan)) {
      throw new UsageError(
        `--plan must be one of ${PLANS.join(', ')} (got ${JSON.stringify(plan)})`,
      );
    }
    const limits = customLimits(plan, values['per-minute'], values['per-day']);
    const label = values.name ?? '';

    return async (context) => {
      const { record, key } = await context.services.apiKeys.create({
        plan,
        label,
        ...(limits ? { customLimits: limits } : {}),
      });
      context.stderr.write(
        [
          `Created API key ${record.id}${label === '' ? '' : ` (${JSON.stringify(label)})`}`,
          `  plan: ${describePlan(record)}`,
          'This is the only time the key is shown: copy it now (it is the last line of stdout).',
          '',
        ].join('\n'),
      );
      context.stdout.write(`${key}\n`);
    };
  },
};

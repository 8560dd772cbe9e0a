import { type Command, keyIdArgument, parseCommandArgs } from '../command.js';
import { describeView } from '../describe.js';
import { cliActor, planChangeOf } from '../key-options.js';

export const keysSetPlan: Command = {
  name: 'keys set-plan',
  summary: 'change the plan or enterprise limits of a key in place (same key, same secret)',
  help: [
    'Usage: petstore keys set-plan <keyId> --plan free|pro|business',
    '       petstore keys set-plan <keyId> --plan enterprise --per-minute N --per-day N',
    '',
    'Running servers apply the new limits within 1 second with Redis, 5 seconds without.',
    'Requests already counted this minute and day stay counted: a free key that used 50 of 60',
    'this minute and moves to pro has 250 left, not 300. Below what was used, the key gets 429',
    'until the window resets. A ban stays in force.',
  ].join('\n'),
  migrateOnOpen: true,
  prepare(args) {
    const { values, positionals } = parseCommandArgs(
      args,
      {
        plan: { type: 'string' },
        'per-minute': { type: 'string' },
        'per-day': { type: 'string' },
      },
      true,
    );
    const id = keyIdArgument(positionals);
    const change = planChangeOf(values);
    return async ({ services, stderr }) => {
      const key = await services.keys.setPlan(id, change, cliActor());
      stderr.write(
        `${key.id} is now ${describeView(key)}; running servers apply it within 5 seconds.\n`,
      );
    };
  },
};

import { type Command, parseCommandArgs, UsageError } from '../command.js';

export const adminTokensCreate: Command = {
  name: 'admin-tokens create',
  summary: 'issue an admin API token; it is printed once, alone on the last line of stdout',
  help: [
    'Usage: petstore admin-tokens create --name LABEL',
    '',
    'Options:',
    '  --name LABEL       required: who or what the token is for (shown by admin-tokens list)',
    '',
    'An admin token opens the admin API (ADMIN_PORT) and nothing else: send it as',
    'Authorization: Bearer pa_admin_... Every change it makes is audited under its id.',
    'The token goes to stdout and nothing else does, so `TOKEN=$(petstore admin-tokens create',
    '--name ops)` works. Only its hash is stored: it cannot be shown again.',
  ].join('\n'),
  migrateOnOpen: true,
  prepare(args) {
    const { values } = parseCommandArgs(args, { name: { type: 'string' } });
    const name = values.name?.trim();
    if (name === undefined || name === '') {
      throw new UsageError('--name is required: who or what the admin token is for');
    }
    if (name.length > 100) throw new UsageError('--name must be at most 100 characters');
    return async (context) => {
      const { record, token } = await context.services.admin.tokens.create(name);
      context.stderr.write(
        [
          `Created admin token ${record.id} (${JSON.stringify(name)})`,
          'This is the only time the token is shown: copy it now (it is the last line of stdout).',
          '',
        ].join('\n'),
      );
      context.stdout.write(`${token}\n`);
    };
  },
};

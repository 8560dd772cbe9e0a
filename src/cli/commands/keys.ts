import { parseArgs } from 'node:util';
import type { ApiKeyRecord } from '../../domain/api-keys/api-key.js';
import { ApiKeyInputError, ApiKeyService } from '../../domain/api-keys/api-key-service.js';
import { systemClock } from '../../domain/clock.js';
import { isPlan, PLANS } from '../../domain/rate-limits/plans.js';
import { type CliContext, type Command, positiveInteger, UsageError } from '../cli-context.js';

const LIMIT_MAX = 1_000_000_000;

async function service(context: CliContext): Promise<ApiKeyService> {
  return new ApiKeyService(
    (await context.storage()).apiKeys,
    systemClock,
    context.config.environment,
  );
}

function oneKeyId(args: string[], command: string): string {
  const { positionals } = parseArgs({ args, allowPositionals: true, strict: true });
  const [id, ...extra] = positionals;
  if (id === undefined || extra.length > 0)
    throw new UsageError(`${command} takes exactly one key id`);
  return id;
}

function describeLimits(record: ApiKeyRecord): string {
  const limits = ApiKeyService.limitsOf(record);
  return `${limits.perMinute}/min ${limits.perDay}/day`;
}

function state(record: ApiKeyRecord, now: number): string {
  if (record.revokedAt !== undefined) return `revoked ${new Date(record.revokedAt).toISOString()}`;
  if (record.bannedUntil !== undefined && record.bannedUntil > now) {
    return `banned until ${new Date(record.bannedUntil).toISOString()}`;
  }
  return 'active';
}

export const keysCreate: Command = {
  name: 'keys create',
  summary: 'issue a new API key (printed once, alone on the last line of stdout)',
  usage:
    'petstore keys create --plan free|pro|business|enterprise [--per-minute N --per-day N] [--name LABEL]',
  async run(args, context) {
    const { values } = parseArgs({
      args,
      strict: true,
      options: {
        plan: { type: 'string' },
        'per-minute': { type: 'string' },
        'per-day': { type: 'string' },
        name: { type: 'string' },
      },
    });
    if (!isPlan(values.plan)) {
      throw new UsageError(
        `--plan must be one of ${PLANS.join(', ')} (got ${JSON.stringify(values.plan ?? '')})`,
      );
    }
    const custom = values['per-minute'] !== undefined || values['per-day'] !== undefined;
    const customLimits = custom
      ? {
          perMinute: positiveInteger('--per-minute', values['per-minute'], LIMIT_MAX),
          perDay: positiveInteger('--per-day', values['per-day'], LIMIT_MAX),
        }
      : undefined;
    let created;
    try {
      created = await (
        await service(context)
      ).create({
        plan: values.plan,
        ...(values.name !== undefined ? { label: values.name } : {}),
        ...(customLimits ? { customLimits } : {}),
      });
    } catch (error) {
      if (error instanceof ApiKeyInputError) throw new UsageError(error.message);
      throw error;
    }
    const { record, key } = created;
    context.stderr.write(
      `Created key ${record.id} (${record.plan}, ${describeLimits(record)})${record.label ? ` "${record.label}"` : ''}.\n` +
        'The key is shown once, on the next line of stdout; only its hash is stored.\n',
    );
    context.stdout.write(`${key}\n`);
    return 0;
  },
};

export const keysList: Command = {
  name: 'keys list',
  summary: 'list keys: id, label, plan, display prefix, state (never the key)',
  usage: 'petstore keys list',
  async run(args, context) {
    parseArgs({ args, strict: true, options: {} });
    const records = await (await service(context)).list();
    if (records.length === 0)
      context.stderr.write('No keys yet: create one with petstore keys create --plan free\n');
    const now = Date.now();
    for (const r of records) {
      const used =
        r.lastUsedAt === undefined
          ? 'never used'
          : `last used ${new Date(r.lastUsedAt).toISOString()}`;
      context.stdout.write(
        [
          r.id,
          JSON.stringify(r.label),
          `${r.plan} ${describeLimits(r)}`,
          `${r.displayPrefix}…`,
          state(r, now),
          `created ${new Date(r.createdAt).toISOString()}`,
          used,
        ].join('  ') + '\n',
      );
    }
    return 0;
  },
};

/** A command that acts on one key by id and fails when no such key exists. */
function keyIdCommand(
  verb: 'revoke' | 'unban',
  summary: string,
  act: (keys: ApiKeyService, id: string) => Promise<boolean>,
  done: (id: string) => string,
): Command {
  return {
    name: `keys ${verb}`,
    summary,
    usage: `petstore keys ${verb} <keyId>`,
    async run(args, context) {
      const id = oneKeyId(args, `keys ${verb}`);
      if (!(await act(await service(context), id))) throw new UsageError(`no key has id ${id}`);
      context.stderr.write(`${done(id)}\n`);
      return 0;
    },
  };
}

export const keysRevoke = keyIdCommand(
  'revoke',
  'revoke a key for good (servers refuse it within 5 seconds)',
  (keys, id) => keys.revoke(id),
  (id) => `Revoked ${id}; running servers refuse it within 5 seconds.`,
);

export const keysUnban = keyIdCommand(
  'unban',
  'lift a temporary ban early',
  (keys, id) => keys.unban(id),
  (id) => `Lifted any ban on ${id}.`,
);

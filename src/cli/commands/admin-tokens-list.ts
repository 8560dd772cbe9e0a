import { type Command, parseCommandArgs } from '../command.js';

const iso = (ms: number | undefined) => (ms === undefined ? '-' : new Date(ms).toISOString());

export const adminTokensList: Command = {
  name: 'admin-tokens list',
  summary: 'list admin tokens: id, name, prefix, created, last used, state (never a token)',
  help: 'Usage: petstore admin-tokens list',
  migrateOnOpen: true,
  prepare(args) {
    parseCommandArgs(args, {});
    return async (context) => {
      const tokens = await context.services.admin.tokens.list();
      if (tokens.length === 0) {
        context.stderr.write(
          'No admin tokens. Create one: petstore admin-tokens create --name LABEL\n',
        );
        return;
      }
      for (const t of tokens) {
        const state = t.revokedAt === undefined ? 'active' : `revoked ${iso(t.revokedAt)}`;
        context.stdout.write(
          [
            t.id,
            JSON.stringify(t.name),
            t.displayPrefix,
            iso(t.createdAt),
            iso(t.lastUsedAt),
            state,
          ]
            .join('\t')
            .concat('\n'),
        );
      }
    };
  },
};

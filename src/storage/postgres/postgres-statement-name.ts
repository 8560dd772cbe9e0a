/** The tables of the schema (postgres-migrations.ts) and Kysely's; any other is `other`. */
const TABLES = new Set([
  'pets',
  'api_keys',
  'idempotency_keys',
  'key_audit',
  'key_usage',
  'admin_tokens',
  'admin_idempotency',
  'store_generation',
  'kysely_migration',
  'kysely_migration_lock',
]);

/** The statements an operator asks about by name; the rest are named `<table>_<command>`. */
const KNOWN: ReadonlyArray<readonly [RegExp, string]> = [
  [/^select .* from "pets" where "id" = \$1$/s, 'pet_by_id'],
  // The limit is a parameter, or written in the text for the prepared page reads.
  [/^select .* from "pets" .*limit (\$\d+|\d+)$/s, 'pets_page'],
  [/^insert into "pets"/, 'pet_insert'],
  [/^select .* from "api_keys" where "(previous_)?hash" = \$1$/s, 'key_by_hash'],
  [/^select .* from "api_keys" where "id" = \$1$/s, 'key_by_id'],
  [/^do \$\$/, 'readiness_check'],
  // The once-a-second poll of postgres-id-horizon.ts.
  [/^select \(select max\(id\) from pets\)/, 'id_horizon_poll'],
];

const COMMANDS = ['select', 'insert', 'update', 'delete', 'with'];
const TRANSACTION = ['begin', 'commit', 'rollback', 'savepoint', 'release', 'set'];

/**
 * A bounded name for a statement, from its text: a metric label must never carry the SQL itself.
 * The names are one per table and command, plus the hot statements by their own name, so there
 * are at most some sixty whatever the queries.
 */
export function statementName(sql: string): string {
  const text = sql.trimStart().toLowerCase();
  for (const [pattern, name] of KNOWN) if (pattern.test(text)) return name;
  const command = /^[a-z]+/.exec(text)?.[0] ?? '';
  if (TRANSACTION.includes(command)) return command;
  if (!COMMANDS.includes(command)) return 'other';
  const table = /(?:from|into|update)\s+"?([a-z_]+)/.exec(text)?.[1];
  return `${table !== undefined && TABLES.has(table) ? table : 'other'}_${command}`;
}

/**
 * Names by statement text, kept: the service sends a few dozen texts (Kysely compiles the same
 * query to the same text), so each is classified once. Past the bound, texts are classified on
 * every call rather than kept, so memory stays bounded whatever is sent.
 */
export function statementNames(bound = 500): (sql: string) => string {
  const names = new Map<string, string>();
  return (sql) => {
    let name = names.get(sql);
    if (name === undefined) {
      name = statementName(sql);
      if (names.size < bound) names.set(sql, name);
    }
    return name;
  };
}

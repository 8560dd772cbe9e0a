import type { Config } from '../config/config.js';
import { redactUrl } from '../config/redact.js';
import type { ApiKeyRecord } from '../domain/api-keys/api-key.js';
import { ApiKeyService } from '../domain/api-keys/api-key-service.js';
import type { KeyView } from '../domain/api-keys/key-management-service.js';

/** Where a command acts, for operators who run it against the wrong file; never shows a password. */
export function describeDatabase(database: Config['database']): string {
  if (database.kind === 'sqlite') return `SQLite database ${database.path}`;
  // The password in the user part and in the query (`?password=`, libpq's other way) both go.
  return `PostgreSQL database ${redactUrl(database.url)}`;
}

/** "free 60/min 1000/day"; a damaged enterprise row shows as such rather than failing the listing. */
export function describePlan(record: ApiKeyRecord): string {
  if (record.plan === 'enterprise' && record.customLimits === undefined) {
    return 'enterprise (no limits stored)';
  }
  const { perMinute, perDay } = ApiKeyService.limitsOf(record);
  return `${record.plan} ${perMinute}/min ${perDay}/day`;
}

/** "pro 300/min 10000/day", from the view the CLI and the admin API share. */
export function describeView(view: KeyView): string {
  return `${view.plan} ${view.limits.perMinute}/min ${view.limits.perDay}/day`;
}

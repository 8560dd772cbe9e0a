import { hostname, userInfo } from 'node:os';
import type { Actor } from '../domain/api-keys/key-audit.js';
import { type PlanChange, planChangeProblem } from '../domain/api-keys/key-management-service.js';
import { parseScopes, type Scope } from '../domain/api-keys/scopes.js';
import { DAY_MS } from '../domain/clock.js';
import { parseRfc3339, RFC3339_HINT } from '../domain/rfc3339.js';
import { DomainError } from '../domain/errors.js';
import {
  type CustomLimitsProblem,
  customLimitsProblem,
  isPlan,
  MAX_CUSTOM_LIMIT,
  PLANS,
} from '../domain/rate-limits/plans.js';
import { positiveInteger, UsageError } from './command.js';

/** Who runs the CLI, for the audit trail: the OS user and the host. */
export function cliActor(): Actor {
  let user: string;
  try {
    user = userInfo().username;
  } catch {
    // A container user without a passwd entry has a uid but no name.
    user = `uid ${process.getuid?.() ?? 'unknown'}`;
  }
  return { kind: 'cli', user, host: hostname() };
}

const PROBLEMS: Record<CustomLimitsProblem, string> = {
  only_for_enterprise: '--per-minute and --per-day are only for --plan enterprise',
  enterprise_needs_both: '--plan enterprise needs both --per-minute N and --per-day N',
};

const FIELD_OPTIONS: Record<string, string> = { perMinute: '--per-minute', perDay: '--per-day' };

/** --plan with --per-minute and --per-day, checked by the domain's own rule. */
export function planChangeOf(values: {
  plan?: string | undefined;
  'per-minute'?: string | undefined;
  'per-day'?: string | undefined;
}): PlanChange {
  const plan = values.plan;
  if (plan === undefined) throw new UsageError(`--plan is required: one of ${PLANS.join(', ')}`);
  if (!isPlan(plan)) {
    throw new UsageError(`--plan must be one of ${PLANS.join(', ')} (got ${JSON.stringify(plan)})`);
  }
  const perMinute = values['per-minute'];
  const perDay = values['per-day'];
  const problem = customLimitsProblem(plan, { perMinute, perDay });
  if (problem !== undefined) throw new UsageError(PROBLEMS[problem]);
  if (plan !== 'enterprise') return { plan };
  if (perMinute === undefined || perDay === undefined) throw new Error('checked above');
  const change: PlanChange = {
    plan,
    perMinute: positiveInteger('--per-minute', perMinute, MAX_CUSTOM_LIMIT),
    perDay: positiveInteger('--per-day', perDay, MAX_CUSTOM_LIMIT),
  };
  const invalid = planChangeProblem(change);
  if (invalid !== undefined) {
    let message = invalid.message;
    for (const [field, option] of Object.entries(FIELD_OPTIONS)) {
      message = message.replaceAll(field, option);
    }
    throw new UsageError(message);
  }
  return change;
}

const UNITS: Record<string, number> = { d: DAY_MS, h: 3_600_000, m: 60_000, s: 1_000 };

/** `90d`, `12h`, `30m`, `45s`, or `0` where `zero` is allowed. */
export function duration(option: string, value: string, zero: boolean): number {
  if (zero && value === '0') return 0;
  const match = /^(\d{1,6})([dhms])$/.exec(value);
  const ms = match ? Number(match[1]) * (UNITS[match[2] ?? ''] ?? NaN) : NaN;
  if (!(ms > 0)) {
    throw new UsageError(
      `${option} must be a duration like 90d, 12h, 30m or 45s${zero ? ', or 0' : ''} (got ${JSON.stringify(value)})`,
    );
  }
  return ms;
}

const RFC_3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

/** An RFC 3339 time with its offset (e.g. 2027-01-31T12:00:00Z), as epoch ms. */
export function rfc3339(option: string, value: string): number {
  const ms = RFC_3339.test(value) ? parseRfc3339(value.replace(' ', 'T')) : undefined;
  if (ms === undefined) {
    throw new UsageError(`${option} must be ${RFC3339_HINT} (got ${JSON.stringify(value)})`);
  }
  return ms;
}

export function isoOrNever(epochMs: string | null): string {
  return epochMs ?? 'never';
}

/** A comma list of scopes (`pets:read,pets:write`), checked by the domain's own rule. */
export function scopesOf(option: string, value: string): Scope[] {
  try {
    return parseScopes(value);
  } catch (error) {
    if (error instanceof DomainError) {
      throw new UsageError(`${option}: ${error.message.replace(/^scopes must be /, 'must be ')}`);
    }
    throw error;
  }
}

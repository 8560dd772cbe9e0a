export const PLANS = ['free', 'pro', 'business', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

export interface Limits {
  perMinute: number;
  perDay: number;
}

/** Published plan limits; enterprise limits are agreed per key and stored with it. */
export const PLAN_LIMITS: Readonly<Record<Exclude<Plan, 'enterprise'>, Limits>> = Object.freeze({
  free: { perMinute: 60, perDay: 1_000 },
  pro: { perMinute: 300, perDay: 10_000 },
  business: { perMinute: 1_000, perDay: 100_000 },
});

export function isPlan(value: unknown): value is Plan {
  return typeof value === 'string' && (PLANS as readonly string[]).includes(value);
}

/** Far above any plan; the cap keeps a stray extra digit from creating a key with no real limit. */
export const MAX_CUSTOM_LIMIT = 1_000_000_000;

export type CustomLimitsProblem = 'enterprise_needs_both' | 'only_for_enterprise';

/**
 * The rule for custom limits: an enterprise key has both its own per-minute and per-day limits, any
 * other plan has none. Undefined when the combination is valid.
 */
export function customLimitsProblem(
  plan: Plan,
  given: { perMinute?: unknown; perDay?: unknown },
): CustomLimitsProblem | undefined {
  const some = given.perMinute !== undefined || given.perDay !== undefined;
  const both = given.perMinute !== undefined && given.perDay !== undefined;
  if (plan !== 'enterprise') return some ? 'only_for_enterprise' : undefined;
  return both ? undefined : 'enterprise_needs_both';
}

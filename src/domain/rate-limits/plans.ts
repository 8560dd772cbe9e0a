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

/** One rate-limit window as the last response described it. */
export interface QuotaWindow {
  name: string;
  /** From `RateLimit-Policy`, when sent. */
  limit?: number;
  windowSeconds?: number;
  remaining: number;
  resetSeconds: number;
}

/** The quota in force after the last response: read it to slow down before a 429. */
export interface Quota {
  limit: number;
  remaining: number;
  resetAt: Date;
  /** Every window (`RateLimit` / `RateLimit-Policy`, IETF draft-11). */
  windows: QuotaWindow[];
  /** When this was read. */
  observedAt: Date;
}

type Params = Record<string, number>;

/** `"minute";r=59;t=41, "day";r=999;t=4000` → { minute: { r: 59, t: 41 }, ... } */
function parseItems(header: string | null): Map<string, Params> {
  const items = new Map<string, Params>();
  for (const item of (header ?? '').split(',')) {
    const [rawName, ...params] = item.trim().split(';');
    const name = rawName?.trim().replace(/^"(.*)"$/, '$1');
    if (!name) continue;
    const values: Params = {};
    for (const param of params) {
      const [key, value] = param.trim().split('=');
      const number = Number(value);
      if (key && Number.isFinite(number)) values[key] = number;
    }
    items.set(name, values);
  }
  return items;
}

export function readQuota(headers: Headers, now: Date): Quota | undefined {
  const limit = Number(headers.get('x-ratelimit-limit') ?? Number.NaN);
  const remaining = Number(headers.get('x-ratelimit-remaining') ?? Number.NaN);
  const reset = Number(headers.get('x-ratelimit-reset') ?? Number.NaN);
  if (![limit, remaining, reset].every(Number.isFinite)) return undefined;
  const policy = parseItems(headers.get('ratelimit-policy'));
  const windows: QuotaWindow[] = [];
  for (const [name, state] of parseItems(headers.get('ratelimit'))) {
    if (state.r === undefined || state.t === undefined) continue;
    const declared = policy.get(name);
    windows.push({
      name,
      remaining: state.r,
      resetSeconds: state.t,
      ...(declared?.q === undefined ? {} : { limit: declared.q }),
      ...(declared?.w === undefined ? {} : { windowSeconds: declared.w }),
    });
  }
  return { limit, remaining, resetAt: new Date(reset * 1000), windows, observedAt: now };
}

/**
 * A metric's child series (prom-client's labels()) by label values, each looked up once and
 * kept: the labels are bounded, so the cache is too. (A child still hashes its labels when
 * counted; this spares the lookup and the child's allocation.) One Map per label, keyed by the
 * values the caller already holds, so that a lookup builds no key of its own on each request.
 */
export function seriesCache<A = string, S = unknown>(lookUp: (a: A) => S): (a: A) => S {
  const series = new Map<A, S>();
  return (a) => {
    let found = series.get(a);
    if (found === undefined) {
      found = lookUp(a);
      series.set(a, found);
    }
    return found;
  };
}

/** seriesCache for a metric of two labels. */
export function seriesCache2<A = string, B = string, S = unknown>(
  lookUp: (a: A, b: B) => S,
): (a: A, b: B) => S {
  const byFirst = new Map<A, (b: B) => S>();
  return (a, b) => {
    let rest = byFirst.get(a);
    if (rest === undefined) {
      rest = seriesCache((second) => lookUp(a, second));
      byFirst.set(a, rest);
    }
    return rest(b);
  };
}

/** seriesCache for a metric of three labels. */
export function seriesCache3<A = string, B = string, C = string, S = unknown>(
  lookUp: (a: A, b: B, c: C) => S,
): (a: A, b: B, c: C) => S {
  const byFirst = new Map<A, (b: B, c: C) => S>();
  return (a, b, c) => {
    let rest = byFirst.get(a);
    if (rest === undefined) {
      rest = seriesCache2((second, third) => lookUp(a, second, third));
      byFirst.set(a, rest);
    }
    return rest(b, c);
  };
}

/**
 * A metric's child series (prom-client's labels()) by label values, each looked up once and
 * kept: the labels are bounded, so the cache is too. (A child still hashes its labels when
 * counted; this spares the lookup and the child's allocation.) One Map per label, keyed by the
 * values the caller already holds, so that a lookup builds no key of its own on each request.
 */
export function seriesCache<S>(lookUp: (a: string) => S): (a: string) => S {
  const series = new Map<string, S>();
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
export function seriesCache2<S>(lookUp: (a: string, b: string) => S): (a: string, b: string) => S {
  const byFirst = new Map<string, (b: string) => S>();
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
export function seriesCache3<S>(
  lookUp: (a: string, b: string, c: string) => S,
): (a: string, b: string, c: string) => S {
  const byFirst = new Map<string, (b: string, c: string) => S>();
  return (a, b, c) => {
    let rest = byFirst.get(a);
    if (rest === undefined) {
      rest = seriesCache2((second, third) => lookUp(a, second, third));
      byFirst.set(a, rest);
    }
    return rest(b, c);
  };
}

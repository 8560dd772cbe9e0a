/**
 * A metric's child series (prom-client's labels()) by label values, each looked up once and
 * kept: the labels are bounded, so the cache is too. (A child still hashes its labels when
 * counted; this spares the lookup and the child's allocation.)
 */
export function seriesCache<S>(lookUp: (...values: string[]) => S): (...values: string[]) => S {
  const series = new Map<string, S>();
  return (...values) => {
    const key = values.length === 1 ? (values[0] as string) : values.join('\u0000');
    let found = series.get(key);
    if (found === undefined) {
      found = lookUp(...values);
      series.set(key, found);
    }
    return found;
  };
}

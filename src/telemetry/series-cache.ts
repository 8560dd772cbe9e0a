/**
 * Keeps the child series of each label value once looked up: a metric's labels() hashes its
 * labels on every call, and there are few values (the labels are bounded), so each is looked up
 * once and kept.
 */
export function seriesCache<S>(lookUp: (value: string) => S): (value: string) => S {
  const series = new Map<string, S>();
  return (value) => {
    let found = series.get(value);
    if (found === undefined) {
      found = lookUp(value);
      series.set(value, found);
    }
    return found;
  };
}

/**
 * A value now, or a promise of one. The request path can decide most requests without waiting on
 * anything (a key in the cache, counts in memory or in a quota leased here), and there each
 * `async` step cost a promise and a turn of the microtask queue: six of them a request. Steps that
 * may need a round trip return this instead, and callers go on at once when they got a value.
 */
export type SyncOrAsync<T> = T | Promise<T>;

/** `next(value)`, now when `value` is one, else once the promise resolves. */
export function andThen<T, U>(
  value: SyncOrAsync<T>,
  next: (value: T) => SyncOrAsync<U>,
): SyncOrAsync<U> {
  return value instanceof Promise ? value.then(next) : next(value);
}

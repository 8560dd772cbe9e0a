/**
 * A duration in the words the docs and error messages use: "10 seconds", "1.5 seconds",
 * "250 milliseconds", "24 hours". Every sentence that states a limit builds it from the value the
 * code enforces, so the prose cannot disagree with it. `short` gives "10 s", "24 h" for tables.
 */
export function describeDuration(ms: number, style: 'long' | 'short' = 'long'): string {
  const say = (amount: number, long: string, short: string) =>
    style === 'short' ? `${amount} ${short}` : `${amount} ${long}${amount === 1 ? '' : 's'}`;
  // The largest unit that says it in whole numbers; a day is said in hours ("24 hours").
  const units: readonly [size: number, least: number, long: string, short: string][] = [
    [86_400_000, 2, 'day', 'd'],
    [3_600_000, 1, 'hour', 'h'],
    [60_000, 1, 'minute', 'min'],
    [1_000, 1, 'second', 's'],
  ];
  for (const [size, least, long, short] of units) {
    const amount = ms / size;
    if (amount >= least && Number.isInteger(amount)) return say(amount, long, short);
  }
  if (ms >= 1_000) return say(Math.round(ms / 100) / 10, 'second', 's');
  return say(ms, 'millisecond', 'ms');
}

/** A size as the docs and messages state it: "16 KiB". */
export function describeKiB(bytes: number): string {
  return `${Math.floor(bytes / 1024)} KiB`;
}

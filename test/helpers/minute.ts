/*
 * Tests that count a key's requests against its per-minute limit on real servers, whose windows
 * follow the Redis server's or this machine's clock (one clock here), need the counted requests
 * to fall in one UTC minute.
 */
export const MINUTE_MS = 60_000;

/**
 * Waits for the next UTC minute when fewer than `neededMs` are left in this one. `neededMs` is a
 * few times what the counted part takes on a busy machine, not more: every second of it is a
 * chance in sixty of waiting out the rest of a minute. A test still checks afterwards that its
 * requests did not cross a boundary.
 */
export async function minuteWithRoom(neededMs: number): Promise<void> {
  const left = MINUTE_MS - (Date.now() % MINUTE_MS);
  if (left < neededMs) await new Promise((resolve) => setTimeout(resolve, left + 50));
}

import { describe, expect, it } from 'vitest';
import type { UsageCount } from '../../src/domain/api-keys/key-audit.js';
import { KeyUsageCounter } from '../../src/domain/api-keys/key-usage-counter.js';
import type { KeyUsageStore } from '../../src/domain/ports.js';
import { TestClock } from '../helpers/test-clock.js';

function recordingStore(): KeyUsageStore & { written: UsageCount[] } {
  const written: UsageCount[] = [];
  return {
    written,
    add: async (counts) => void written.push(...counts.map((count) => ({ ...count }))),
    days: async () => [],
    purgeBefore: async () => 0,
  };
}

describe('KeyUsageCounter', () => {
  it('counts each request on the UTC day it arrived, across midnight and back', async () => {
    const store = recordingStore();
    const clock = new TestClock(Date.UTC(2026, 10, 24, 23, 59, 59, 999));
    const usage = new KeyUsageCounter(store, clock);
    usage.record('k1', true);
    clock.advance(1); // 2026-11-25T00:00:00.000Z
    usage.record('k1', true);
    usage.record('k1', false);
    // A clock set back (a test, a corrected host clock) still counts on the day it reads.
    clock.advance(-2);
    usage.record('k1', false);
    await usage.flush();
    expect(store.written).toEqual([
      { keyId: 'k1', day: '2026-11-24', admitted: 1, refused: 1 },
      { keyId: 'k1', day: '2026-11-25', admitted: 1, refused: 1 },
    ]);
  });
});

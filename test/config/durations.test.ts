import { describe, expect, it } from 'vitest';
import { describeDuration, describeKiB } from '../../src/config/durations.js';

describe('describeDuration', () => {
  it.each([
    [10_000, '10 seconds', '10 s'],
    [1_000, '1 second', '1 s'],
    [1_500, '1.5 seconds', '1.5 s'],
    [72_000, '72 seconds', '72 s'],
    [900_000, '15 minutes', '15 min'],
    [86_400_000, '24 hours', '24 h'],
    [172_800_000, '2 days', '2 d'],
    [250, '250 milliseconds', '250 ms'],
  ])('says %d ms as "%s" and "%s"', (ms, long, short) => {
    expect(describeDuration(ms)).toBe(long);
    expect(describeDuration(ms, 'short')).toBe(short);
  });

  it('says sizes in KiB', () => {
    expect(describeKiB(16 * 1024)).toBe('16 KiB');
  });
});

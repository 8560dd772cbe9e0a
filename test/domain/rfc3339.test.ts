import { describe, expect, it } from 'vitest';
import { LATEST_TIME_MS, parseRfc3339 } from '../../src/domain/rfc3339.js';

describe('parseRfc3339', () => {
  it('reads times with their offsets, leap days included', () => {
    expect(parseRfc3339('2027-01-31T09:00:00+09:00')).toBe(Date.UTC(2027, 0, 31));
    expect(parseRfc3339('2028-02-29T00:00:00.5Z')).toBe(Date.UTC(2028, 1, 29, 0, 0, 0, 500));
    expect(parseRfc3339('9999-12-31T23:59:59Z')).toBe(LATEST_TIME_MS - 999);
  });

  it('refuses days that do not exist, fields out of range and instants past 9999 in UTC', () => {
    for (const text of [
      '2027-02-30T00:00:00Z',
      '2100-02-29T00:00:00Z',
      '2027-13-01T00:00:00Z',
      '2027-01-01T23:60:00Z',
      '2027-01-01T00:00:60Z',
      '2027-01-01T00:00:00+00:60',
      '9999-12-31T23:59:59-23:59',
      '2027-01-01',
      '2027-01-01T00:00:00',
    ]) {
      expect(parseRfc3339(text), text).toBeUndefined();
    }
  });
});

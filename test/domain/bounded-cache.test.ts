import { describe, expect, it } from 'vitest';
import { BoundedCache } from '../../src/domain/cache/bounded-cache.js';

interface Value {
  body: string;
}
/** Weighs a value as two bytes a character of the key and the body, plus 100. */
const weigh = (key: string, value: Value) => 2 * (key.length + value.body.length) + 100;
/** A value that weighs 300 bytes under a key of two characters. */
const copy = (fill: string): Value => ({ body: fill.repeat(98) });

describe('a cache within a byte budget', () => {
  it('never holds more bytes than the budget, evicting the oldest entry not read since', () => {
    const cache = new BoundedCache<Value>(900, weigh);
    cache.set('k1', copy('a'));
    cache.set('k2', copy('b'));
    cache.set('k3', copy('c'));
    expect(cache.size).toEqual({ entries: 3, bytes: 900 });
    cache.get('k1');
    cache.set('k4', copy('d'));
    // k1 was read since it was kept: k2, the oldest unread, went instead.
    expect(cache.size).toEqual({ entries: 3, bytes: 900 });
    expect(cache.get('k2')).toBeUndefined();
    expect(cache.get('k1')?.body).toBe('a'.repeat(98));
    expect(cache.get('k3')?.body).toBe('c'.repeat(98));
    expect(cache.get('k4')?.body).toBe('d'.repeat(98));
  });

  it('evicts an entry read once, once it was passed over and not read again', () => {
    const cache = new BoundedCache<Value>(600, weigh);
    cache.set('k1', copy('a'));
    cache.set('k2', copy('b'));
    cache.get('k1');
    cache.set('k3', copy('c')); // k1 gets its second chance, behind k3; k2 goes
    cache.set('k4', copy('d')); // k3 is now the oldest: it goes
    expect(cache.get('k2')).toBeUndefined();
    expect(cache.get('k3')).toBeUndefined();
    cache.set('k5', copy('e')); // k1 was passed over and (in the line above) not read: it goes
    expect(cache.get('k1')).toBeUndefined();
    expect(cache.get('k4')?.body).toBe('d'.repeat(98));
    expect(cache.size.entries).toBe(2);
  });

  it('keeps no entry larger than the whole budget, and replaces a key in place', () => {
    const cache = new BoundedCache<Value>(400, weigh);
    cache.set('big', { body: 'x'.repeat(200) });
    expect(cache.size.entries).toBe(0);
    cache.set('k1', copy('a'));
    cache.set('k1', copy('b'));
    expect(cache.size).toEqual({ entries: 1, bytes: 300 });
    expect(cache.get('k1')?.body).toBe('b'.repeat(98));
  });
});

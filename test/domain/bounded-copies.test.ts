import { describe, expect, it } from 'vitest';
import { BoundedCopies } from '../../src/domain/pets/store-copies.js';

/** A copy whose kept size (sizeOf: two bytes a character, plus 100) is 300 bytes under key `k1`. */
const copy = (fill: string) => ({ body: fill.repeat(98) });

describe('copies within a byte budget', () => {
  it('never hold more bytes than the budget, dropping the oldest copy not read since', () => {
    const copies = new BoundedCopies(900);
    copies.set('k1', copy('a'));
    copies.set('k2', copy('b'));
    copies.set('k3', copy('c'));
    expect(copies.size).toEqual({ entries: 3, bytes: 900 });
    copies.get('k1');
    copies.set('k4', copy('d'));
    // k1 was read since it was kept: k2, the oldest unread, went instead.
    expect(copies.size).toEqual({ entries: 3, bytes: 900 });
    expect(copies.get('k2')).toBeUndefined();
    expect(copies.get('k1')?.body).toBe('a'.repeat(98));
    expect(copies.get('k3')?.body).toBe('c'.repeat(98));
    expect(copies.get('k4')?.body).toBe('d'.repeat(98));
  });

  it('drop a copy read once, once it was passed over and not read again', () => {
    const copies = new BoundedCopies(600);
    copies.set('k1', copy('a'));
    copies.set('k2', copy('b'));
    copies.get('k1');
    copies.set('k3', copy('c')); // k1 gets its second chance, behind k3; k2 goes
    copies.set('k4', copy('d')); // k3 is now the oldest: it goes
    expect(copies.get('k2')).toBeUndefined();
    expect(copies.get('k3')).toBeUndefined();
    copies.set('k5', copy('e')); // k1 was passed over and (in the line above) not read: it goes
    expect(copies.get('k1')).toBeUndefined();
    expect(copies.get('k4')?.body).toBe('d'.repeat(98));
    expect(copies.size.entries).toBe(2);
  });

  it('keep no copy larger than the whole budget, and replace a key in place', () => {
    const copies = new BoundedCopies(400);
    copies.set('big', { body: 'x'.repeat(200) });
    expect(copies.size.entries).toBe(0);
    copies.set('k1', copy('a'));
    copies.set('k1', copy('b'));
    expect(copies.size).toEqual({ entries: 1, bytes: 300 });
    expect(copies.get('k1')?.body).toBe('b'.repeat(98));
  });
});

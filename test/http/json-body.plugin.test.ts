import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { firstInvalidUtf8Byte } from '../../src/http/plugins/json-body.plugin.js';

const fatal = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function decodes(bytes: Uint8Array): boolean {
  try {
    fatal.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

describe('firstInvalidUtf8Byte, which words the 400 for a body that is not UTF-8', () => {
  /** Bytes at the edges of the UTF-8 ranges (Unicode Table 3-7), where a scanner goes wrong. */
  const edge = fc.constantFrom(
    0x7f,
    0x80,
    0x8f,
    0x90,
    0x9f,
    0xa0,
    0xbf,
    0xc0,
    0xc1,
    0xc2,
    0xdf,
    0xe0,
    0xe1,
    0xec,
    0xed,
    0xee,
    0xef,
    0xf0,
    0xf1,
    0xf3,
    0xf4,
    0xf5,
    0xff,
  );
  /** Valid UTF-8 with a few such bytes spliced in, so both outcomes are common. */
  const bytes = fc
    .tuple(
      fc.string({ unit: 'grapheme', maxLength: 12 }),
      fc.array(fc.oneof(edge, fc.integer({ min: 0, max: 255 })), { maxLength: 5 }),
      fc.nat(),
    )
    .map(([text, noise, at]) => {
      const valid = new TextEncoder().encode(text);
      const i = at % (valid.length + 1);
      return Uint8Array.from([...valid.subarray(0, i), ...noise, ...valid.subarray(i)]);
    });

  it('finds a bad byte exactly when the fatal decoder refuses, and the text before it decodes', () => {
    fc.assert(
      fc.property(bytes, (input) => {
        const at = firstInvalidUtf8Byte(input);
        expect(at === -1).toBe(decodes(input));
        if (at >= 0) expect(decodes(input.subarray(0, at))).toBe(true);
      }),
      { numRuns: 20000 },
    );
  });
});

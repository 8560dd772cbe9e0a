import fc from 'fast-check';

/**
 * One code point of any kind as a string, lone surrogates included: what fast-check's
 * `unit: 'binary'` draws, without its cost. fast-check builds that unit as a table of all
 * 1,114,112 code points (about 0.9 s of CPU in each test worker that first asks for it, some 6 s
 * of a suite run); these ranges give the same alphabet, ASCII and the BMP drawn as often as the
 * planes above, so short strings still hit quotes, escapes and surrogates.
 */
export const anyCodePoint: fc.Arbitrary<string> = fc
  .oneof(
    fc.integer({ min: 0, max: 0x7f }),
    fc.integer({ min: 0x80, max: 0xffff }),
    fc.integer({ min: 0xd800, max: 0xdfff }),
    fc.integer({ min: 0x10000, max: 0x10ffff }),
  )
  .map((codePoint) => String.fromCodePoint(codePoint));

/** Strings of any code points (lone surrogates included), up to `maxLength` of them. */
export const binaryString = (maxLength: number): fc.Arbitrary<string> =>
  fc.string({ unit: anyCodePoint, maxLength });

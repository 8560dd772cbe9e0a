/**
 * Characters that change what a terminal shows rather than show themselves: C0 and C1 controls
 * (escape sequences start with ESC or CSI), DEL, the bidirectional overrides, embeddings and
 * isolates (a label could reorder the columns around it), the line and paragraph separators, and
 * the invisible joiners and marks that can hide text.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/gu;

/**
 * Text from storage (a key's label) made safe to print: every character above is written as a
 * visible `\u{…}` escape, so what an operator reads is what is stored, and nothing is run.
 */
export function terminalSafe(text: string): string {
  return text.replace(
    UNSAFE,
    (char) => `\\u{${(char.codePointAt(0) ?? 0).toString(16).padStart(4, '0')}}`,
  );
}

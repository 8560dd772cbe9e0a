import { describe, expect, it } from 'vitest';
import { terminalSafe } from '../../src/cli/terminal-text.js';
import { createKey, petstore, useTempDatabases } from './cli-harness.js';

const tempDatabase = useTempDatabases();

/** Every character a terminal acts on rather than shows: C0, DEL, C1, bidi controls, separators. */
const HOSTILE = ['\u001b', '\u007f', '\u0085', '\u009b', '\u202e', '\u2066', '\u2028', '\u200b'];

describe('terminalSafe', () => {
  it.each(HOSTILE)('writes U+%s as a visible escape', (char) => {
    const code = (char.codePointAt(0) ?? 0).toString(16).padStart(4, '0');
    expect(terminalSafe(`a${char}b`)).toBe(`a\\u{${code}}b`);
  });

  it('leaves printable text, accents, CJK and emoji as they are', () => {
    const text = 'Café 猫 🐈 "quoted" tab-free';
    expect(terminalSafe(text)).toBe(text);
  });
});

describe('petstore keys list, with a label holding terminal controls', () => {
  it('prints no C0/C1 control or bidi override raw, but each as an escape', async () => {
    const db = tempDatabase();
    await createKey(db, ['--plan', 'free', '--name', `x${HOSTILE.join('')}y`]);

    const result = await petstore(db, ['keys', 'list']);

    expect(result.code).toBe(0);
    const printed = result.stdout.replace(/\n$/, '');
    for (const char of HOSTILE) expect(printed).not.toContain(char);
    expect(printed).toContain('\\u{009b}');
    expect(printed).toContain('\\u{202e}');
  });
});

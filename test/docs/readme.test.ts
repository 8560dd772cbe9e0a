import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERRORS } from '../../src/http/errors/error-table.js';

const ROOT = new URL('../../', import.meta.url);
const MAX_TABLE_WIDTH = 100;

function read(path: string): string {
  return readFileSync(new URL(path, ROOT), 'utf8');
}

/** The lines of a Markdown file outside fenced code blocks, with their 1-based numbers. */
function proseLines(text: string): Array<{ line: number; text: string }> {
  let fenced = false;
  const lines: Array<{ line: number; text: string }> = [];
  text.split('\n').forEach((line, index) => {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    else if (!fenced) lines.push({ line: index + 1, text: line });
  });
  return lines;
}

/** Targets of inline links `[text](target)` outside code blocks, external ones left out. */
function localLinks(text: string): string[] {
  const targets: string[] = [];
  for (const { text: line } of proseLines(text)) {
    for (const match of line.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = match[1] ?? '';
      if (!/^[a-z]+:/i.test(target)) targets.push(target);
    }
  }
  return targets;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(text: string): Set<string> {
  return new Set(
    proseLines(text).flatMap(({ text: line }) => {
      const heading = /^#{1,6}\s+(.*)$/.exec(line)?.[1];
      return heading === undefined ? [] : [anchorOf(heading)];
    }),
  );
}

const docsFiles = readdirSync(new URL('docs/', ROOT)).filter((name) => name.endsWith('.md'));

describe('the README', () => {
  const readme = read('README.md');

  it(`keeps every table line within ${MAX_TABLE_WIDTH} characters`, () => {
    const wide = proseLines(readme)
      .filter(({ text }) => text.trimStart().startsWith('|') && [...text].length > MAX_TABLE_WIDTH)
      .map(({ line, text }) => `README.md:${line} is ${[...text].length} characters`);
    expect(wide).toEqual([]);
  });

  it('links every file of docs/, and every docs/ file it links exists', () => {
    const linked = new Set(
      localLinks(readme)
        .map((target) => target.split('#')[0] ?? '')
        .filter((path) => path.startsWith('docs/')),
    );
    for (const path of linked) expect(existsSync(new URL(path, ROOT)), path).toBe(true);
    for (const name of docsFiles)
      expect(linked, `README does not link docs/${name}`).toContain(`docs/${name}`);
  });

  it('has the error table row of every code, with the status and `when` of src/http/errors/error-table.ts', () => {
    const rows = new Set(
      proseLines(readme).map(({ text }) => text.replace(/\s*\|\s*/g, '|').trim()),
    );
    for (const [code, { status, when }] of Object.entries(ERRORS)) {
      expect(rows, code).toContain(`|\`${code}\`|${status}|${when}|`);
    }
  });
});

describe('the links of the README and docs/', () => {
  const files = ['README.md', ...docsFiles.map((name) => `docs/${name}`)];

  it.each(files)(
    '%s: every relative link reaches a file, and a heading when it names one',
    (file) => {
      for (const target of localLinks(read(file))) {
        const [path = '', anchor] = target.split('#');
        const url = new URL(path === '' ? file : path, new URL(file, ROOT));
        expect(existsSync(url), `${file} links ${target}`).toBe(true);
        if (anchor !== undefined && url.pathname.endsWith('.md')) {
          expect(anchorsOf(readFileSync(url, 'utf8')), `${file} links ${target}`).toContain(anchor);
        }
      }
    },
  );
});

import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { API_SCOPE, isUnder } from '../../src/http/scopes.js';

const SRC = join(import.meta.dirname, '../../src');
const SCOPES_MODULE = 'http/scopes.ts';

/**
 * Files that still spell the prefix, each owned by other work, with why. An entry that no longer
 * spells it fails the test too, so the list only shrinks.
 */
const NOT_YET: Readonly<Record<string, string>> = {
  // Strips a trailing prefix from PUBLIC_BASE_URL; config/ cannot import http/.
  'config/config.ts': 'config/ sits below http/',
  // The start line names the API address.
  'server-main.ts': 'process entry, owned by the runtime work',
  // The 410's words name the operation and its successor; domain/ cannot import http/.
  'domain/pets/deprecation.ts': 'domain/ sits below http/',
  // Checks a remote deployment's paths; cli/ cannot import http/.
  'cli/commands/check.ts': 'cli/ cannot import http/',
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.[cm]?[jt]s$/.test(entry.name) ? [path] : [];
  });
}

/**
 * The literal text of the code (strings, template parts, regular expressions), never comments: a
 * comment may say "/v1", code that builds a path from it may not.
 */
function literals(path: string): string[] {
  const file = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    // A module's file name (./routes/v1.routes.js) names a file, not a path clients call.
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) return;
    if (
      ts.isStringLiteralLike(node) ||
      ts.isTemplateHead(node) ||
      ts.isTemplateMiddle(node) ||
      ts.isTemplateTail(node) ||
      ts.isRegularExpressionLiteral(node)
    ) {
      found.push(node.getText(file));
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

/** `/v1` as a path segment, also escaped in a regular expression (`\/v1`). */
const PREFIX = /\\?\/v1(?![\w])/;

describe('the API scope is named once', () => {
  const spelled = new Map<string, string[]>();
  for (const path of sourceFiles(SRC)) {
    const hits = literals(path).filter((text) => PREFIX.test(text));
    if (hits.length > 0) spelled.set(relative(SRC, path), hits);
  }

  it(`spells ${API_SCOPE.prefix} in code only in src/${SCOPES_MODULE}`, () => {
    const elsewhere = [...spelled].filter(([file]) => file !== SCOPES_MODULE && !(file in NOT_YET));
    expect(Object.fromEntries(elsewhere)).toEqual({});
    expect(spelled.has(SCOPES_MODULE)).toBe(true);
  });

  it('keeps no stale exception: each file listed still spells it', () => {
    for (const file of Object.keys(NOT_YET)) expect(spelled.has(file), file).toBe(true);
  });

  it('sees the prefix in literals, escaped regular expressions and templates, never in comments', () => {
    const probe = join(import.meta.dirname, 'scopes.test.ts');
    expect(literals(probe).some((text) => PREFIX.test(text))).toBe(true);
    expect(PREFIX.test(String.raw`/^\/v1(\/|$)/`)).toBe(true);
    expect(PREFIX.test("'/v10'")).toBe(false);
  });
});

describe('isUnder', () => {
  it.each([
    ['/v1', true],
    ['/v1/', true],
    ['/v1?x=1', true],
    ['/v1/pets/1', true],
    ['/v10/pets', false],
    ['/v1pets', false],
    ['/docs', false],
    ['/', false],
  ])('%s is under the API scope: %s', (url, under) => {
    expect(isUnder(API_SCOPE, url)).toBe(under);
  });
});

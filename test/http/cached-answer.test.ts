import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CachedAnswer } from '../../src/http/answers/cached-answer.js';

/**
 * A client keeps a tag across deploys and sends it back to whichever instance and release answers
 * next: the tag must stay what every release computed, the SHA-256 of the answer's own headers (each
 * part and a line end), a blank line and the body, in base64url, 27 characters.
 */
describe("an answer's tag", () => {
  const headers = [
    'content-type',
    'application/json; charset=utf-8',
    'link',
    '<https://pets.example/v1/pets?limit=2&cursor=cDJ8Mnw>; rel="next"',
  ];
  const body = '[{"id":1,"name":"Rex","categoryId":3,"status":"available"}]';
  const digest = createHash('sha256');
  for (const part of headers) digest.update(part).update('\n');
  const tag = digest.update('\n').update(body).digest('base64url').slice(0, 27);

  it('is the SHA-256 of its own headers and body, the same in every release', () => {
    const answer = new CachedAnswer(body, headers);
    expect(answer.identity.etag).toBe(`"${tag}"`);
    expect(answer.identity.headers).toEqual([
      ...headers,
      'etag',
      `"${tag}"`,
      'content-length',
      String(Buffer.byteLength(body)),
    ]);
    expect(answer.etag('br')).toBe(`"${tag}-br"`);
    expect(answer.etag('gzip')).toBe(`"${tag}-gzip"`);
  });

  it('is named by the 304 of each representation, which carries no Content-Type', () => {
    const answer = new CachedAnswer(body, headers);
    for (const coding of [undefined, 'br', 'gzip'] as const) {
      const etag = coding === undefined ? `"${tag}"` : `"${tag}-${coding}"`;
      const sent = answer.notModified(coding);
      expect(sent).toMatchObject({ status: 304, etag, body: undefined });
      expect(sent.headers).toEqual([headers[2], headers[3], 'etag', etag]);
      // Made once, then the same for every request that revalidates.
      expect(answer.notModified(coding)).toBe(sent);
    }
  });
});

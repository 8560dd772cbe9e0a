import { describe, expect, it } from 'vitest';
import { createLogger, jsonLinesOf } from '../../src/telemetry/logging/logger.js';
import { accessLine } from '../../src/http/plugins/access-log.plugin.js';

/** The time is the one field two writes cannot share. */
const timeless = (line: string) => line.replace(/"time":\d+/, '"time":0');

const ENTRIES = [
  { method: 'GET', route: '/v1/pets', status: 200, durationMs: 1.2, keyId: 'key_3fj2K9' },
  { method: 'GET', route: '/v1/pets/{petId}', status: 404, durationMs: 0, keyId: 'key_x' },
  { method: 'POST', route: '/v1/pets', status: 201, durationMs: 12345.6 },
  {
    method: 'GET',
    url: '/v1/"odd"\\path\u0001\u2028é😀?limit=3 (+1 other parameters)',
    status: 404,
    durationMs: 0.1,
  },
  { method: 'DELETE', url: `/v1/${'x'.repeat(300)}`, status: 405, durationMs: 3 },
  // As the plugin builds them: the fields it has no value for are there, undefined.
  { method: 'GET', route: undefined, url: '/v2', status: 404, durationMs: 2, keyId: undefined },
  { method: 'GET', route: '/v1/pets', url: undefined, status: 429, durationMs: 0.5, keyId: 'k' },
];

describe('the access line formatted by hand', () => {
  it('is the line pino writes for the same request id, fields and message', () => {
    const written: string[] = [];
    const logger = createLogger({ level: 'info', stream: { write: (l) => void written.push(l) } });
    const lines = jsonLinesOf(logger);
    if (lines === undefined) throw new Error('createLogger registers its destination');
    for (const [index, entry] of ENTRIES.entries()) {
      const requestId = index % 2 === 0 ? `req-${index}` : 'f1c0a2e4-5b6d-4e7f-8a9b-0c1d2e3f4a5b';
      logger.child({ requestId }).info(entry, 'request completed');
      const byPino = written.pop() ?? '';
      expect(timeless(accessLine(lines, requestId, entry))).toBe(timeless(byPino));
    }
  });

  it('is not offered for a logger createLogger did not make', () => {
    const logger = createLogger({ level: 'info', stream: { write: () => undefined } });
    expect(jsonLinesOf(logger.child({ a: 1 }))).toBeUndefined();
  });
});

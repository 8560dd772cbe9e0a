import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, statusOf } from '../../src/http/errors/error-table.js';
import type { ErrorCode } from '../../src/http/errors/http-error.js';
import { DEPLOY_DIR } from './manifests.js';

/**
 * What the shipped HAProxy answers by itself (no instance ready, one that dropped the connection,
 * one too slow) is the service's own Error body, as the error table says it: a client never has
 * to tell HAProxy's HTML from the service's JSON. compose-processes.test.ts sees the 503 through a
 * running HAProxy; this reads every errorfile the configuration names.
 */
const HAPROXY_DIR = join(DEPLOY_DIR, 'haproxy');
const cfg = readFileSync(join(HAPROXY_DIR, 'haproxy.cfg'), 'utf8');
const errorfiles = [...cfg.matchAll(/^\s*errorfile (\d{3}) \/usr\/local\/etc\/haproxy\/(\S+)$/gm)];

describe('deploy/haproxy/errors', () => {
  it('are named for 502, 503 and 504, from the folder compose mounts', () => {
    expect(errorfiles.map((match) => match[1])).toEqual(['502', '503', '504']);
  });

  it.each(errorfiles.map((match) => [match[1] ?? '', match[2] ?? '']))(
    '%s answers the Error body of the error table, with Retry-After and a right Content-Length',
    (_event, file) => {
      const raw = readFileSync(join(HAPROXY_DIR, file));
      const split = raw.indexOf('\r\n\r\n');
      expect(split).toBeGreaterThan(0);
      const [statusLine = '', ...lines] = raw.subarray(0, split).toString('latin1').split('\r\n');
      const body = raw.subarray(split + 4);
      const headers = new Map(
        lines.map((line) => {
          const colon = line.indexOf(':');
          return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()] as const;
        }),
      );
      const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine)?.[1]);
      const parsed = JSON.parse(body.toString('utf8')) as {
        code: ErrorCode;
        message: string;
        status: number;
      };
      expect(Object.keys(parsed).sort()).toEqual(['code', 'message', 'status']);
      expect(ERROR_CODES).toContain(parsed.code);
      expect(parsed.code).toBe('unavailable');
      expect(statusOf(parsed.code)).toBe(status);
      expect(parsed.status).toBe(status);
      expect(headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(headers.get('content-length')).toBe(String(body.length));
      expect(headers.get('retry-after')).toMatch(/^\d+$/);
      expect(parsed.message).toContain(`retry after ${headers.get('retry-after')} seconds`);
      expect(headers.get('cache-control')).toBe('no-store');
    },
  );
});

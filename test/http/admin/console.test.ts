import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { call } from '../../helpers/test-server.js';
import { adminCall, useAdminServer } from './admin-server.js';

// One backend only: the console's files are served from dist/console, not from a database.

/**
 * The console's page and assets on the admin listener (built by `npm run build` into
 * dist/console): its own strict policy, precompressed answers, and nothing on the pet listener.
 */
const server = useAdminServer();
const BUILT = new URL('../../../dist/console/', import.meta.url);

describe('the operator console on the admin listener', () => {
  it('serves the page at /admin/ and /admin under a CSP with no inline script or style and no eval', async () => {
    for (const path of ['/admin/', '/admin']) {
      // Not through adminCall: the page is no admin API answer to check against its document.
      const res = await call({ ...server().pets, url: server().admin.url }, 'GET', path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("connect-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|\*|https?:/);
      expect(res.headers.get('cache-control')).toBe('no-cache');
      expect(res.text).toContain('Petstore operator console');
      // Every asset the page names is on this origin, under /admin/.
      const assets = [...res.text.matchAll(/<(?:script|link)[^>]* (?:src|href)="([^"]+)"/g)].map(
        (m) => m[1],
      );
      expect(assets.length).toBeGreaterThanOrEqual(2);
      for (const asset of assets) expect(asset).toMatch(/^\/admin\/app-[A-Z0-9]{8}\.(js|css)$/);
    }
  });

  it('answers each asset precompressed as the client accepts it, the same bytes once decoded', async () => {
    const script = readdirSync(BUILT).find((name) => /^app-.*\.js$/.test(name)) ?? '';
    const raw = readFileSync(new URL(script, BUILT), 'utf8');
    for (const [accept, encoding] of [
      ['br, gzip', 'br'],
      ['gzip', 'gzip'],
      ['identity', null],
    ] as const) {
      const res = await fetch(`${server().admin.url}/admin/${script}`, {
        headers: { 'accept-encoding': accept },
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-encoding'), accept).toBe(encoding);
      expect(res.headers.get('vary')).toBe('Accept-Encoding');
      expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      expect(await res.text()).toBe(raw);
    }
  });

  it('answers 404 with the Error body for a file it does not have, and nothing on the pet listener', async () => {
    for (const path of ['/admin/nope.js', '/admin/index.html.br', '/admin/..%2Fpackage.json']) {
      const res = await adminCall(server(), 'GET', path);
      expect(res.status, path).toBe(404);
      expect(res.body).toMatchObject({ code: 'not_found', status: 404 });
    }
    const pets = await call(server().pets, 'GET', '/admin/');
    expect(pets.status).toBe(404);
  });
});

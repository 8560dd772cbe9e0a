import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

describe('the client bundle', () => {
  it('bundles for browsers with no Node built-ins, small enough to ship', async () => {
    const result = await build({
      entryPoints: [new URL('../../packages/client/dist/index.js', import.meta.url).pathname],
      bundle: true,
      minify: true,
      format: 'esm',
      platform: 'browser',
      target: 'es2022',
      write: false,
      logLevel: 'silent',
    });
    const code = result.outputFiles[0]?.contents ?? new Uint8Array();
    const gzipped = gzipSync(code).length;
    console.log(`@pet-adoption/client: ${code.length} B minified, ${gzipped} B gzipped`);
    expect(result.errors).toEqual([]);
    expect(new TextDecoder().decode(code)).not.toMatch(/\bnode:/);
    expect(gzipped).toBeLessThan(8_000);
  });
});

/* global console, URL */
// The operator console's build, the last step of `npm run build`: bundles console/src (its
// TypeScript, uPlot and openapi-fetch) with esbuild into dist/console, names each asset by its
// content, writes the page that loads them, and precompresses every file (brotli, gzip) so the
// admin listener serves them as they are. Prints the page weight.
import { build } from 'esbuild';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const root = new URL('./', import.meta.url).pathname;
const out = join(root, '..', 'dist', 'console');
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

const result = await build({
  entryPoints: { app: join(root, 'src', 'main.ts') },
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['chrome111', 'firefox111', 'safari16.4'],
  outdir: out,
  entryNames: '[name]-[hash]',
  metafile: true,
  legalComments: 'none',
  logLevel: 'warning',
});

const outputs = Object.keys(result.metafile.outputs).map((file) => basename(file));
const js = outputs.find((file) => file.endsWith('.js'));
const css = outputs.find((file) => file.endsWith('.css'));
if (js === undefined || css === undefined) throw new Error(`console build wrote ${outputs}`);
const page = readFileSync(join(root, 'index.html'), 'utf8')
  .replace('%APP_JS%', js)
  .replace('%APP_CSS%', css);
writeFileSync(join(out, 'index.html'), page);

const weight = { raw: 0, gzip: 0, br: 0 };
for (const name of readdirSync(out)) {
  const raw = readFileSync(join(out, name));
  const gz = gzipSync(raw, { level: 9 });
  const br = brotliCompressSync(raw, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: 11,
      [constants.BROTLI_PARAM_SIZE_HINT]: raw.length,
    },
  });
  writeFileSync(join(out, `${name}.gz`), gz);
  writeFileSync(join(out, `${name}.br`), br);
  weight.raw += raw.length;
  weight.gzip += gz.length;
  weight.br += br.length;
}
console.log(
  `console: dist/console (${outputs.length + 1} files) raw ${weight.raw} B, gzip ${weight.gzip} B, br ${weight.br} B`,
);

import { build } from 'esbuild';
import type { Browser } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { BROWSER_WAIT_MS, chromiumFor, launchChromium } from '../helpers/chromium.js';
import { useServer } from '../helpers/test-server.js';

const SUITE = '@pet-adoption/client in a browser';
const haveChromium = chromiumFor(SUITE);

const server = useServer();
let browser: Browser | undefined;
afterAll(async () => {
  await browser?.close();
});

describe.skipIf(!haveChromium)(SUITE, () => {
  it('creates and lists pets with fetch, exact int64 included, in headless Chromium', async () => {
    const s = server();
    const { key } = await s.createKey('pro');
    const bundle = await build({
      entryPoints: [new URL('../../packages/client/dist/index.js', import.meta.url).pathname],
      bundle: true,
      format: 'iife',
      globalName: 'PetAdoption',
      platform: 'browser',
      write: false,
      logLevel: 'silent',
    });
    const code = new TextDecoder().decode(bundle.outputFiles[0]?.contents);
    browser = await launchChromium();
    const page = await browser.newPage();
    // Same origin as the API, so no CORS is involved; the page is only a place to run the client.
    // The docs page, since its policy lets it call this server (a JSON response's forbids all).
    await page.goto(`${s.url}/docs`, { timeout: BROWSER_WAIT_MS });
    // Strict-mode code evaluated this way keeps its `var`s to itself, so publish the global by hand.
    await page.evaluate(`${code}\nglobalThis.PetAdoption = PetAdoption;`);
    // The page's own origin, passed in: the test is type-checked without the DOM library.
    const result = await page.evaluate(
      async ({ apiKey, baseUrl }) => {
        type Client = {
          createPet(pet: {
            name: string;
            categoryId: bigint;
          }): Promise<{ id: bigint; categoryId: bigint }>;
          listPets(query: { limit: number }): AsyncIterable<{ id: bigint; name: string }>;
          quota?: { limit: number };
        };
        const lib = (
          globalThis as unknown as { PetAdoption: { PetClient: new (o: object) => Client } }
        ).PetAdoption;
        const client = new lib.PetClient({ baseUrl, apiKey, int64: 'bigint' });
        const created = await client.createPet({ name: 'Browser', categoryId: 2n ** 63n - 1n });
        const names: string[] = [];
        for await (const pet of client.listPets({ limit: 2 })) names.push(pet.name);
        return {
          categoryId: created.categoryId.toString(),
          idType: typeof created.id,
          names,
          limit: client.quota?.limit,
        };
      },
      { apiKey: key, baseUrl: new URL(page.url()).origin },
    );
    expect(result).toMatchObject({
      categoryId: '9223372036854775807',
      idType: 'bigint',
      limit: 300,
    });
    expect(result.names).toContain('Browser');
  });
});

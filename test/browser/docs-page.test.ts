import { existsSync, mkdirSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BROWSER_WAIT_MS, chromiumFor, launchChromium } from '../helpers/chromium.js';
import { call, startServer, type TestServer } from '../helpers/test-server.js';

const SCREENSHOT_DIR = new URL('../../test-results/', import.meta.url);
const SCREENSHOT = new URL('docs-page.png', SCREENSHOT_DIR);
const poll = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: BROWSER_WAIT_MS });

const SUITE = 'the /docs page in headless Chromium';
const haveChromium = chromiumFor(SUITE);

describe.skipIf(!haveChromium)(SUITE, () => {
  let server: TestServer | undefined;
  let browser: Browser | undefined;
  let page: Page | undefined;
  /** Every URL the page asked for, in order. */
  const requested: string[] = [];
  /** Console errors and uncaught exceptions, Content-Security-Policy refusals included. */
  const problems: string[] = [];

  const s = (): TestServer => {
    if (server === undefined) throw new Error('server not started');
    return server;
  };
  const p = (): Page => {
    if (page === undefined) throw new Error('page not open');
    return page;
  };

  beforeAll(async () => {
    server = await startServer();
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(BROWSER_WAIT_MS);
    page.setDefaultNavigationTimeout(BROWSER_WAIT_MS);
    page.on('request', (request) => requested.push(request.url()));
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    // Nothing leaves this machine: a request to another host is recorded above, then refused.
    const origin = server.url;
    await page.route('**/*', (route) =>
      new URL(route.request().url()).origin === origin ? route.continue() : route.abort(),
    );
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('shows the three operations, getPet deprecated, the rate limits and the error codes', async () => {
    await p().goto(`${s().url}/docs`, { waitUntil: 'load' });
    const listPets = p().locator('#operations-Pets-listPets');
    const createPet = p().locator('#operations-Pets-createPet');
    const getPet = p().locator('#operations-Pets-getPet');
    await poll(() => listPets.count()).toBe(1);

    await poll(() => p().title()).toBe('Pet Adoption Service API');
    for (const [block, method, path, summary, operationId] of [
      [listPets, 'GET', '/pets', 'List pets', 'listPets'],
      [createPet, 'POST', '/pets', 'Add a pet', 'createPet'],
      [getPet, 'GET', '/pets/{petId}', 'Get a pet (deprecated)', 'getPet'],
    ] as const) {
      await block.waitFor({ state: 'visible' });
      expect(await block.locator('.opblock-summary-method').innerText()).toBe(method);
      expect(await block.locator('[data-path]').getAttribute('data-path')).toBe(path);
      expect(await block.locator('.opblock-summary-description').innerText()).toBe(summary);
      expect(await block.locator('.opblock-summary-operation-id').innerText()).toBe(operationId);
    }
    // Swagger UI marks a deprecated operation with its own class (greyed out, path struck through).
    expect(await getPet.getAttribute('class')).toContain('opblock-deprecated');
    expect(await listPets.getAttribute('class')).not.toContain('opblock-deprecated');
    expect(await createPet.getAttribute('class')).not.toContain('opblock-deprecated');

    const info = p().locator('.information-container');
    await info.getByRole('heading', { name: 'Rate limits' }).waitFor({ state: 'visible' });
    const infoText = await info.innerText();
    expect(infoText).toMatch(/free\s+60\s+1000/);
    expect(infoText).toContain('Retry-After');
    expect(infoText).toContain('X-RateLimit-Remaining');
    await info.getByRole('heading', { name: 'Errors' }).waitFor({ state: 'visible' });
    for (const code of ['rate_limited', 'api_key_banned', 'not_found', 'invalid_body']) {
      await info.getByRole('cell', { name: code, exact: true }).waitFor({ state: 'visible' });
    }
  });

  it('shows examples: the body to send, the pet it answers, an error body', async () => {
    const createPet = p().locator('#operations-Pets-createPet');
    await createPet.locator('.opblock-summary-control').click();
    const body = createPet.locator('.opblock-section-request-body');
    await body.waitFor({ state: 'visible' });
    // With "Try it out" on by default the example fills the editable request body.
    await poll(
      async () => JSON.parse(await body.locator('textarea').inputValue()) as unknown,
    ).toEqual({ name: 'Rex', categoryId: 3, status: 'available' });
    const created = createPet.locator('.responses-wrapper tr.response[data-code="201"]');
    await poll(() => created.locator('.example').first().innerText()).toMatch(
      /"id": 1,\s*"name": "Rex",\s*"categoryId": 3,\s*"status": "available"/,
    );
    const refused = createPet.locator('.responses-wrapper tr.response[data-code="422"]');
    await poll(() => refused.locator('.example').first().innerText()).toContain(
      '"code": "idempotency_key_reused"',
    );
    await createPet.locator('.opblock-summary-control').click();
  });

  it('runs listPets against this server with a key entered in Authorize', async () => {
    const { key } = await s().createKey('pro');
    const created = await call(s(), 'POST', '/v1/pets', {
      key,
      body: { name: 'Docs page', categoryId: 3, status: 'available' },
    });
    expect(created.status).toBe(201);

    await p().locator('button.authorize').first().click();
    const dialog = p().locator('.dialog-ux .modal-ux');
    await dialog.waitFor({ state: 'visible' });
    await dialog.locator('.auth-container input').first().fill(key);
    await dialog.locator('button.modal-btn.authorize').click();
    await dialog.locator('button.modal-btn.btn-done').click();
    await dialog.waitFor({ state: 'hidden' });

    const listPets = p().locator('#operations-Pets-listPets');
    await listPets.locator('.opblock-summary-control').click();
    const tryItOut = listPets.getByRole('button', { name: 'Try it out' });
    // "Try it out" is on by default (tryItOutEnabled); the button then reads "Cancel".
    if (await tryItOut.isVisible()) await tryItOut.click();
    await listPets.getByRole('button', { name: 'Execute' }).click();

    const live = listPets.locator('.live-responses-table');
    await live.waitFor({ state: 'visible' });
    await poll(() => live.locator('tr.response .response-col_status').first().innerText()).toBe(
      '200',
    );
    const answer = await live.innerText();
    expect(answer).toContain('"name": "Docs page"');
    expect(answer).toMatch(/x-ratelimit-limit: 300/i);
    expect(answer).toMatch(/x-ratelimit-remaining: \d+/i);
    expect(answer).toMatch(/x-ratelimit-reset: \d+/i);
    // The request went to the server that served the page, with the key as a bearer token.
    const curl = await listPets.locator('.curl-command').innerText();
    expect(curl).toContain(`${s().url}/v1/pets?limit=2`);
    expect(curl).toContain(`Authorization: Bearer ${key}`);

    mkdirSync(SCREENSHOT_DIR, { recursive: true });
    await p().screenshot({ path: SCREENSHOT.pathname, fullPage: true, timeout: BROWSER_WAIT_MS });
    expect(existsSync(SCREENSHOT)).toBe(true);
  });

  it('loaded nothing from another host and broke no Content-Security-Policy rule', () => {
    const origin = s().url;
    expect(requested.length).toBeGreaterThan(0);
    expect(
      requested.filter((url) => new URL(url).origin !== origin && !/^data:/.test(url)),
    ).toEqual([]);
    expect(requested).toContain(`${origin}/docs/json`);
    expect(requested).toContain(`${origin}/v1/pets?limit=2`);
    expect(problems).toEqual([]);
  });
});

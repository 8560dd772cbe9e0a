import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KeyView, UsageDay } from '../../src/domain/api-keys/key-management-service.js';
import { utcDay } from '../../src/domain/api-keys/key-audit.js';
import { petstore } from '../cli/cli-harness.js';
import { BROWSER_WAIT_MS, chromiumFor, launchChromium } from '../helpers/chromium.js';
import { TestClock } from '../helpers/test-clock.js';
import { call } from '../helpers/test-server.js';
import { type AdminTestServer, startAdminServer } from '../http/admin/admin-server.js';

/**
 * The operator console in headless Chromium against a real admin listener: every change made
 * through the page is read back through the admin API, the usage under the chart against
 * `petstore keys usage`, and each page checked by axe-core. Takes the two screenshots the README
 * shows: into docs/images/ with UPDATE_SCREENSHOTS=1, else into a temporary folder (they hold
 * times and random ids, so every run would change the tracked files).
 */
const IMAGES =
  process.env.UPDATE_SCREENSHOTS === '1'
    ? new URL('../../docs/images/', import.meta.url)
    : pathToFileURL(`${mkdtempSync(join(tmpdir(), 'petstore-console-'))}/`);
const AXE_SOURCE = readFileSync(
  createRequire(import.meta.url).resolve('axe-core/axe.min.js'),
  'utf8',
);
const DAY_MS = 86_400_000;

const SUITE = 'the operator console in headless Chromium';
const haveChromium = chromiumFor(SUITE);

describe.skipIf(!haveChromium)(SUITE, () => {
  let server: AdminTestServer | undefined;
  let browser: Browser | undefined;
  let page: Page | undefined;
  let token = '';
  let tokenId = '';
  /** Console errors, uncaught exceptions and Content-Security-Policy refusals. */
  const problems: string[] = [];
  /** Requests the page made to anywhere but the admin listener. */
  const foreign: string[] = [];
  /** Every change the page asked of the admin API, with its Idempotency-Key. */
  const changes: Array<{ what: string; idempotencyKey: string | undefined }> = [];

  const s = (): AdminTestServer => {
    if (server === undefined) throw new Error('server not started');
    return server;
  };
  const p = (): Page => {
    if (page === undefined) throw new Error('page not open');
    return page;
  };
  const api = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await call({ ...s().pets, url: s().admin.url }, method, `/admin/v1${path}`, {
      key: token,
      ...(body === undefined ? {} : { body }),
    });
    expect(res.status, `${method} ${path}`).toBeLessThan(300);
    return res.body as T;
  };
  const keyByLabel = async (label: string): Promise<KeyView> => {
    const found = await api<KeyView[]>('GET', `/keys?label=${encodeURIComponent(label)}`);
    expect(found, label).toHaveLength(1);
    return found[0] as KeyView;
  };

  /** axe-core in the page (evaluated through the debugging protocol, which the CSP does not govern). */
  const seriousViolations = async (): Promise<string[]> => {
    await p().evaluate(AXE_SOURCE);
    const violations = await p().evaluate(async () => {
      const axe = (
        globalThis as unknown as {
          axe: {
            run(): Promise<{
              violations: Array<{ id: string; impact: string | null; nodes: unknown[] }>;
            }>;
          };
        }
      ).axe;
      const result = await axe.run();
      return result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length }));
    });
    return violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.impact}, ${v.nodes} nodes)`);
  };

  beforeAll(async () => {
    // The real clock: the CLI below reads usage days by it.
    server = await startAdminServer({ clock: new TestClock(Date.now()), sqliteFile: true });
    ({ token, id: tokenId } = await server.services.admin.tokens
      .create('console-test')
      .then(({ record, token: t }) => ({ token: t, id: record.id })));
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(BROWSER_WAIT_MS);
    page.on('console', (message) => {
      if (message.type() === 'error' && !/status of 4[0-9][0-9]/.test(message.text())) {
        problems.push(`console: ${message.text()}`);
      }
    });
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('request', (request) => {
      const { pathname } = new URL(request.url());
      if (request.method() !== 'GET' && pathname.startsWith('/admin/v1/')) {
        changes.push({
          what: `${request.method()} ${pathname.replace(/key_\w+/, '{keyId}')}`,
          idempotencyKey: request.headers()['idempotency-key'],
        });
      }
    });
    const origin = server.admin.url;
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (new URL(url).origin === origin) return route.continue();
      foreign.push(url);
      return route.abort();
    });
  });

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('refuses a wrong token with a clear message, then signs in with a good one', async () => {
    await p().goto(`${s().admin.url}/admin/`, { waitUntil: 'load' });
    expect(await seriousViolations()).toEqual([]);
    await p()
      .getByLabel('Admin token')
      .fill(`pa_admin_${'x'.repeat(36)}`);
    await p().getByRole('button', { name: 'Sign in' }).click();
    await expect
      .poll(() => p().locator('#sign-in-error').innerText(), { timeout: BROWSER_WAIT_MS })
      .toMatch(/admin token was refused/);
    expect(await p().evaluate(() => sessionStorage.length)).toBe(0);
    await p().getByLabel('Admin token').fill(token);
    await p().getByRole('button', { name: 'Sign in' }).click();
    await p().getByRole('heading', { name: 'Keys' }).waitFor();
    expect(await p().evaluate(() => localStorage.length)).toBe(0);
    expect(await p().context().cookies()).toEqual([]);
  });

  it('finds a key by label, and shows its usage as `petstore keys usage` reads it', async () => {
    const keys = s().services.keys;
    const actor = { kind: 'cli', user: 'test', host: 'test' } as const;
    for (const [name, plan] of [
      ['acme-prod', 'pro'],
      ['acme-staging', 'free'],
      ['globex-batch', 'business'],
      ['initech-mobile', 'free'],
    ] as const) {
      await keys.create({ change: { plan }, name }, actor);
    }
    const target = await keyByLabel('acme-prod');
    const today = Date.now();
    await s().pets.storage.keyUsage.add(
      [0, 1, 2, 5, 12, 29].map((back, i) => ({
        keyId: target.id,
        day: utcDay(today - back * DAY_MS),
        admitted: 1_000 + i * 137,
        refused: i * 11,
      })),
    );
    await p().goto(`${s().admin.url}/admin/#/keys`);
    await p().getByLabel('Label contains').fill('acme-pr');
    await p().getByRole('button', { name: 'Apply' }).click();
    await expect
      .poll(() => p().locator('table.keys tbody tr').count(), { timeout: BROWSER_WAIT_MS })
      .toBe(1);
    // The keys page with every key, for the README.
    await p().goto(`${s().admin.url}/admin/#/keys?sort=label`);
    await p().locator('table.keys tbody tr').nth(3).waitFor();
    expect(await seriousViolations()).toEqual([]);
    mkdirSync(IMAGES, { recursive: true });
    await p().screenshot({ path: new URL('admin-console-keys.png', IMAGES).pathname });

    await p().getByRole('link', { name: 'acme-prod' }).click();
    await p().getByRole('heading', { name: 'acme-prod' }).waitFor();
    await p().locator('#usage-chart canvas').first().waitFor();
    const shown = await p()
      .locator('#usage-table tbody tr')
      .evaluateAll((rows) =>
        rows.map((row) => {
          const cells = [...row.children].map((cell) => cell.textContent ?? '');
          return { day: cells[0], admitted: Number(cells[1]), refused: Number(cells[2]) };
        }),
      );
    const cli = await petstore(`sqlite:${s().pets.databaseFile ?? ''}`, [
      'keys',
      'usage',
      target.id,
      '--days',
      '30',
      '--json',
    ]);
    expect(cli.code, cli.stderr).toBe(0);
    const fromCli = JSON.parse(cli.stdout) as UsageDay[];
    expect(shown).toEqual(fromCli);
    expect(fromCli.filter((d) => d.admitted > 0)).toHaveLength(6);
    expect(await p().locator('.u-legend').innerText()).toMatch(/Admitted[\s\S]*Refused/);
    expect(await seriousViolations()).toEqual([]);
    await p().screenshot({
      path: new URL('admin-console-key.png', IMAGES).pathname,
      fullPage: true,
    });
    await p().getByRole('button', { name: '90 days' }).click();
    await expect
      .poll(() => p().locator('#usage-table tbody tr').count(), { timeout: BROWSER_WAIT_MS })
      .toBe(90);
  });

  it('creates, changes the plan, rolls, unbans and revokes through the page, each seen by the admin API', async () => {
    await p().goto(`${s().admin.url}/admin/#/keys`);
    const dialog = p().locator('dialog[open]');
    await p().getByRole('button', { name: 'Create key' }).click();
    await dialog.getByLabel('Label').fill('console-made');
    await dialog.getByLabel('Plan').selectOption('pro');
    expect(await seriousViolations()).toEqual([]);
    // A double click makes one key: the dialog's Idempotency-Key is the same for both.
    await dialog.getByRole('button', { name: 'Create key' }).dblclick();
    const secretBox = p().locator('#new-secret');
    await secretBox.waitFor();
    const secret = await secretBox.inputValue();
    expect(secret).toMatch(/^pa_live_[0-9A-Za-z]{36}$/);
    const made = await keyByLabel('console-made');
    expect(made).toMatchObject({ plan: 'pro', state: 'active' });
    expect(secret.startsWith(made.prefix)).toBe(true);
    await p().getByRole('button', { name: 'I have stored it' }).click();
    await p().getByRole('heading', { name: 'console-made' }).waitFor();
    expect(await p().locator('#new-secret').count()).toBe(0);

    await p().getByRole('button', { name: 'Change plan' }).click();
    await dialog.getByLabel('Plan').selectOption('enterprise');
    await dialog.getByLabel('Requests per minute').fill('700');
    await dialog.getByLabel('Requests per day').fill('90000');
    await dialog.getByRole('button', { name: 'Change plan' }).click();
    await expect
      .poll(async () => (await keyByLabel('console-made')).limits, { timeout: BROWSER_WAIT_MS })
      .toEqual({ perMinute: 700, perDay: 90_000 });

    await p().getByRole('button', { name: 'Roll secret' }).click();
    await dialog.getByRole('button', { name: 'Roll secret' }).click();
    await secretBox.waitFor();
    const rolled = await secretBox.inputValue();
    expect(rolled).not.toBe(secret);
    const afterRoll = await keyByLabel('console-made');
    expect(rolled.startsWith(afterRoll.prefix)).toBe(true);
    expect(afterRoll.previousSecretExpiresAt).not.toBeNull();
    await p().getByRole('button', { name: 'I have stored it' }).click();

    await s().pets.storage.apiKeys.setBannedUntil(made.id, Date.now() + 3_600_000);
    expect((await keyByLabel('console-made')).state).toBe('banned');
    await p().reload();
    await p().getByRole('button', { name: 'Unban' }).click();
    await dialog.getByRole('button', { name: 'Unban key' }).click();
    await expect
      .poll(async () => (await keyByLabel('console-made')).state, { timeout: BROWSER_WAIT_MS })
      .toBe('active');

    await p().getByRole('button', { name: 'Revoke' }).click();
    await dialog.getByLabel(/Type the key id/).fill('yes');
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await dialog.getByRole('alert').filter({ hasText: 'to confirm' }).waitFor();
    expect((await keyByLabel('console-made')).state).toBe('active');
    await p()
      .getByLabel(/Type the key id/)
      .fill(made.id);
    await p().getByRole('button', { name: 'Revoke key' }).click();
    await expect
      .poll(async () => (await keyByLabel('console-made')).state, { timeout: BROWSER_WAIT_MS })
      .toBe('revoked');
    await p().locator('.title-row .state-revoked').waitFor();

    const audit = await api<Array<{ action: string; actor: { id?: string } }>>(
      'GET',
      `/audit?keyId=${made.id}`,
    );
    expect(audit.map((e) => e.action)).toEqual(['create', 'set_plan', 'roll', 'unban', 'revoke']);
    // Each change carried an Idempotency-Key of its own (a wrong confirmation sent none).
    expect(changes.map((c) => c.what)).toEqual([
      'POST /admin/v1/keys',
      'PUT /admin/v1/keys/{keyId}/plan',
      'POST /admin/v1/keys/{keyId}/roll',
      'POST /admin/v1/keys/{keyId}/unban',
      'POST /admin/v1/keys/{keyId}/revoke',
    ]);
    const keys = changes.map((c) => c.idempotencyKey);
    expect(keys.every((k) => k !== undefined && /^[0-9a-f-]{36}$/.test(k))).toBe(true);
    expect(new Set(keys).size).toBe(keys.length);
    expect(audit.every((e) => e.actor.id === tokenId)).toBe(true);
  });

  it('creates a read-only key and sets its scopes through the page, each seen by the admin API', async () => {
    const before = changes.length;
    await p().goto(`${s().admin.url}/admin/#/keys`);
    const dialog = p().locator('dialog[open]');
    await p().getByRole('button', { name: 'Create key' }).click();
    await dialog.getByLabel('Label').fill('console-reader');
    await dialog.getByLabel(/pets:write/).uncheck();
    expect(await seriousViolations()).toEqual([]);
    await dialog.getByRole('button', { name: 'Create key' }).click();
    const secretBox = p().locator('#new-secret');
    await secretBox.waitFor();
    const secret = await secretBox.inputValue();
    await p().getByRole('button', { name: 'I have stored it' }).click();
    await p().getByRole('heading', { name: 'console-reader' }).waitFor();
    const made = await keyByLabel('console-reader');
    expect(made.scopes).toEqual(['pets:read']);
    // The pet listener holds the key to the scopes the page gave it.
    const refused = await call(s().pets, 'POST', '/v1/pets', {
      key: secret,
      body: { name: 'Not allowed', categoryId: 1 },
    });
    expect(refused.status).toBe(403);
    expect((refused.body as { code: string }).code).toBe('insufficient_scope');
    expect(await p().locator('dl.details').innerText()).toMatch(/Scopes\s+pets:read\n/);

    await p().getByRole('button', { name: 'Set scopes' }).click();
    expect(await dialog.getByLabel(/pets:read/).isChecked()).toBe(true);
    expect(await dialog.getByLabel(/pets:write/).isChecked()).toBe(false);
    // None ticked is refused in the page, before any request.
    await dialog.getByLabel(/pets:read/).uncheck();
    await dialog.getByRole('button', { name: 'Set scopes' }).click();
    await dialog.getByRole('alert').filter({ hasText: 'at least one scope' }).waitFor();
    await dialog.getByLabel(/pets:read/).check();
    // From the keyboard: a scope's checkbox toggles with Space.
    await dialog.getByLabel(/pets:write/).press('Space');
    expect(await dialog.getByLabel(/pets:write/).isChecked()).toBe(true);
    expect(await seriousViolations()).toEqual([]);
    await dialog.getByRole('button', { name: 'Set scopes' }).click();
    await expect
      .poll(async () => (await keyByLabel('console-reader')).scopes, { timeout: BROWSER_WAIT_MS })
      .toEqual(['pets:read', 'pets:write']);
    await expect
      .poll(() => p().locator('dl.details').innerText(), { timeout: BROWSER_WAIT_MS })
      .toMatch(/Scopes\s+pets:read, pets:write\n/);

    await p().goto(`${s().admin.url}/admin/#/keys?label=console-reader`);
    await expect
      .poll(() => p().locator('table.keys tbody tr td.scopes').allInnerTexts(), {
        timeout: BROWSER_WAIT_MS,
      })
      .toEqual(['pets:read, pets:write']);

    const audit = await api<Array<{ action: string; changes: Record<string, unknown> }>>(
      'GET',
      `/audit?keyId=${made.id}`,
    );
    expect(audit.map((e) => e.action)).toEqual(['create', 'set_scopes']);
    expect(audit[1]?.changes).toEqual({
      scopes: { from: ['pets:read'], to: ['pets:read', 'pets:write'] },
    });
    const mine = changes.slice(before);
    expect(mine.map((c) => c.what)).toEqual([
      'POST /admin/v1/keys',
      'PUT /admin/v1/keys/{keyId}/scopes',
    ]);
    expect(mine.every((c) => c.idempotencyKey !== undefined)).toBe(true);
  });

  it('says when to retry on 429, and stays signed in', async () => {
    // The address budget is hard to exhaust from one page: the listener's answer is played here.
    await p().route(/\/admin\/v1\/keys\?/, (route) =>
      route.fulfill({
        status: 429,
        headers: { 'content-type': 'application/json', 'retry-after': '7' },
        body: JSON.stringify({ code: 'rate_limited', message: 'Too many requests', status: 429 }),
      }),
    );
    try {
      await p().goto(`${s().admin.url}/admin/#/keys?state=active`);
      await expect
        .poll(() => p().locator('#notice').innerText(), { timeout: BROWSER_WAIT_MS })
        .toMatch(/Too many requests.*Retry in 7 s/);
    } finally {
      // Later tests call the real listener again, whatever happened here.
      await p().unroute(/\/admin\/v1\/keys\?/);
    }
    expect(await p().getByRole('button', { name: 'Sign out' }).isVisible()).toBe(true);
  });

  it('signs out at the next call once its admin token is revoked', async () => {
    await s().services.admin.tokens.revoke(tokenId);
    await p().getByRole('link', { name: 'Keys', exact: true }).click();
    await expect
      .poll(() => p().locator('#sign-in-error').innerText(), { timeout: BROWSER_WAIT_MS })
      .toMatch(/admin token was refused/);
    expect(await p().evaluate(() => sessionStorage.length)).toBe(0);
    expect(await p().getByRole('button', { name: 'Sign out' }).isVisible()).toBe(false);
  });

  it('loaded nothing from another origin and broke no Content-Security-Policy rule', () => {
    expect(foreign).toEqual([]);
    expect(problems).toEqual([]);
  });
});

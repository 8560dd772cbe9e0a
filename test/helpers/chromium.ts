import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';
import { describe, it } from 'vitest';

/** Debian's Chromium; playwright-core never downloads a browser of its own here. */
const CHROMIUM = '/usr/bin/chromium';

/**
 * Whether `suite` can run. Without Chromium it is skipped with a warning, except in CI, where a
 * missing browser is a failing test rather than a skip.
 */
export function chromiumFor(suite: string): boolean {
  if (existsSync(CHROMIUM)) return true;
  const why = `${CHROMIUM} is not installed (apt-get install -y chromium)`;
  if (process.env.CI === 'true') {
    describe(suite, () => {
      it('needs Chromium', () => {
        throw new Error(`${why}: CI must install it`);
      });
    });
  } else {
    console.warn(`skipping ${suite}: ${why}`);
  }
  return false;
}

/**
 * The bound of every wait on a page (a navigation, an element to show, a poll): far above what an
 * idle machine needs, since none of them is a time the service promises. On 2 cores shared with
 * the rest of the suite (load 10 and more while an image stage builds beside it), a 10 s
 * navigation to /docs timed out. A missing element still fails the test, within this bound and
 * below vitest's test timeout (120 s).
 */
export const BROWSER_WAIT_MS = 30_000;

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    timeout: 60_000,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

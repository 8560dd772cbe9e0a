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

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    timeout: 15_000,
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

import { afterEach, describe, expect, it, vi } from 'vitest';
import { freePort, freePortBlock } from '../helpers/server-process.js';

/** Math.random itself, for the draws after the forced ones: earlier files may hold any port. */
const random = Math.random.bind(Math);

/** Math.random draws `value` twice, then its own draws. */
function drawTwice(value: number): void {
  vi.spyOn(Math, 'random')
    .mockReturnValueOnce(value)
    .mockReturnValueOnce(value)
    .mockImplementation(random);
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('freePort (test helper)', () => {
  it('never hands out a port twice, even when the same one is drawn again before it listens', async () => {
    // The same draw twice: a rolling-restart run once got PORT and OPS_PORT equal this way.
    drawTwice(0.25);
    const first = await freePort();
    const second = await freePort();
    expect(second).not.toBe(first);
  });

  it('keeps a block clear of every port handed out before', async () => {
    drawTwice(0.5);
    const port = await freePort();
    const base = await freePortBlock(4);
    expect(port >= base && port < base + 4).toBe(false);
  });
});

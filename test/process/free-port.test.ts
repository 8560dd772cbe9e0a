import { afterEach, describe, expect, it, vi } from 'vitest';
import { freePort, freePortBlock } from '../helpers/server-process.js';

/** Math.random itself, for the draws after the forced ones: earlier files may hold any port. */
const random = Math.random.bind(Math);

afterEach(() => {
  vi.restoreAllMocks();
});

describe('freePort (test helper)', () => {
  it('never hands out a port twice, even when the same one is drawn again before it listens', async () => {
    // The same draw twice: a rolling-restart run once got PORT and OPS_PORT equal this way.
    vi.spyOn(Math, 'random')
      .mockReturnValueOnce(0.25)
      .mockReturnValueOnce(0.25)
      .mockImplementation(random);
    const first = await freePort();
    const second = await freePort();
    expect(second).not.toBe(first);
  });

  it('keeps a block clear of every port handed out before', async () => {
    vi.spyOn(Math, 'random')
      .mockReturnValueOnce(0.5)
      .mockReturnValueOnce(0.5)
      .mockImplementation(random);
    const port = await freePort();
    const base = await freePortBlock(4);
    expect(port >= base && port < base + 4).toBe(false);
  });
});

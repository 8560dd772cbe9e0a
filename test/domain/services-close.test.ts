import { expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { createServices } from '../../src/services.js';
import { createStorage } from '../../src/storage/create-storage.js';
import { overlayStorage } from '../helpers/storage-overlay.js';

/**
 * A shutdown writes the counts gathered since the last interval, but waits for them only until its
 * deadline: behind another process's write lock or a stalled disk a write may not come back for a
 * whole busy timeout, and SHUTDOWN_GRACE_MS bounds the whole stop (src/services.ts, close).
 */
it('waits for the last counts only until the deadline when storage does not answer', async () => {
  const storage = await createStorage({ kind: 'sqlite', path: ':memory:' }, { migrate: true });
  let asked = 0;
  const stalled = overlayStorage(storage, {
    apiKeys: {
      addDeprecatedCalls: () => {
        asked += 1;
        return new Promise<void>(() => {});
      },
    },
  });
  const services = await createServices(loadConfig({}), { storage: stalled });
  services.apiKeys.recordDeprecatedCall('key_stalled');
  try {
    await expect(services.close({ deadlineMs: 50 })).resolves.toBeUndefined();
    expect(asked).toBe(1);
  } finally {
    await storage.close();
  }
});

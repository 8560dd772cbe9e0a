import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { buildApp } from '../../src/http/apps/public/public-app.js';
import {
  FAST_PATH_RULES,
  getRouteHooks,
  undeclaredRules,
} from '../../src/http/fast-path/fast-path-rules.js';
import { createServices } from '../../src/services.js';
import { createStorage } from '../../src/storage/create-storage.js';
import { createLogger } from '../../src/telemetry/logging/logger.js';
import { TestClock } from '../helpers/test-clock.js';

/**
 * No per-request rule of listPets and getPet can be skipped silently by the fast path: every hook
 * on their routes is declared in FAST_PATH_RULES (same, or a reason to leave), and the app refuses
 * to start with one that is not.
 */
async function publicApp(env: Record<string, string>) {
  const storage = await createStorage({ kind: 'sqlite', path: ':memory:' }, { migrate: true });
  const config = loadConfig(env);
  const services = await createServices(config, { storage, clock: new TestClock() });
  const app = await buildApp({
    services,
    logger: createLogger({ level: 'info', stream: { write: () => undefined } }),
  });
  return {
    app,
    close: async () => {
      await app.close();
      await services.close();
      await storage.close();
    },
  };
}

const SETTINGS: Record<string, Record<string, string>> = {
  default: {},
  'CORS on': { CORS_ORIGINS: 'https://shelter.example' },
  'an operations listener': { OPS_PORT: '9464' },
};

describe('the rules of the fast path', () => {
  for (const [name, env] of Object.entries(SETTINGS)) {
    it(`declares every hook of listPets and getPet (${name})`, async () => {
      const { app, close } = await publicApp(env);
      try {
        await app.ready();
        const hooks = getRouteHooks(app);
        // The routes are found, with the hooks that do the work: the parser reads Fastify's listing.
        expect(hooks.get('/v1/pets')).toEqual(
          expect.arrayContaining(['onRequest:answerHeaders', 'onRequest:admitRequest']),
        );
        expect(hooks.get('/v1/pets/:petId')).toEqual(
          expect.arrayContaining(['onSend:markDeprecated', 'preValidation:refuseAfterSunset']),
        );
        expect(undeclaredRules(app)).toEqual([]);
      } finally {
        await close();
      }
    });
  }

  it('stops the app from starting when a hook of those routes is not declared', async () => {
    const { app, close } = await publicApp({});
    try {
      app.addHook('onRequest', function allowlistPartners(_request, _reply, done) {
        done();
      });
      await expect(app.ready()).rejects.toThrow(
        /fast-path-rules\.ts does not declare.*\/v1\/pets onRequest:allowlistPartners/,
      );
    } finally {
      await close().catch(() => undefined);
    }
  });

  it('counts an anonymous hook as undeclared too', async () => {
    const { app, close } = await publicApp({});
    try {
      app.addHook('preHandler', (_request, _reply, done) => done());
      await expect(app.ready()).rejects.toThrow(/preHandler:anonymous/);
    } finally {
      await close().catch(() => undefined);
    }
  });

  it('says for each rule how the fast path keeps it', () => {
    for (const [hook, rule] of Object.entries(FAST_PATH_RULES)) {
      expect({ hook, fastPath: rule.fastPath }).toEqual({
        hook,
        fastPath: expect.stringMatching(/^(same|leaves)$/),
      });
      expect(rule.how.length).toBeGreaterThan(10);
    }
  });
});

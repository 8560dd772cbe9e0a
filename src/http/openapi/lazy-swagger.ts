import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';
import type {
  FastifyInstance,
  FastifyPluginCallback,
  onReadyHookHandler,
  onRegisterHookHandler,
  onRouteHookHandler,
} from 'fastify';
import fp from 'fastify-plugin';

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Loads what app.swagger() needs (registerLazySwagger); resolves at once after the first call.
     * Call it, and await it, before app.swagger().
     */
    loadSwagger(): Promise<void>;
  }
}

type Swagger = FastifyInstance['swagger'];

/** The part of an app @fastify/swagger's dynamic mode uses while it is registered. */
interface RegistrationTarget {
  addHook(name: string, hook: unknown): void;
  decorate(name: string, value: unknown): void;
  getSchemas(): Record<string, unknown>;
}

type Event =
  | { kind: 'route'; route: Parameters<onRouteHookHandler>[0] }
  | { kind: 'register'; instance: FastifyInstance };

/**
 * @fastify/swagger, loaded when its document is first asked for instead of at every start: the
 * package, json-schema-resolver and yaml are many modules, and most instances never serve the
 * document. The plugin builds its document on its first call from what three hooks collected while
 * the app was built: the routes (onRoute), the encapsulated scopes (onRegister) and, once ready,
 * their shared schemas. The same hooks are added here, at the same point of the registration, and
 * what they saw is handed to the real plugin, in the order it came, when it is loaded: the
 * document is the one @fastify/swagger registered at start generates, from the same options.
 *
 * Registered under @fastify/swagger's name, which @fastify/swagger-ui declares as its dependency.
 */
export async function registerLazySwagger(
  app: FastifyInstance,
  options: FastifyDynamicSwaggerOptions,
): Promise<void> {
  const plugin: FastifyPluginCallback = (scope, _options, done) => {
    const events: Event[] = [];
    let ready = false;
    let generate: Swagger | undefined;
    let loading: Promise<void> | undefined;

    scope.addHook('onRoute', (route) => {
      events.push({ kind: 'route', route });
    });
    scope.addHook('onRegister', (instance) => {
      events.push({ kind: 'register', instance });
    });
    scope.addHook('onReady', (hookDone) => {
      ready = true;
      hookDone();
    });

    const load = async (): Promise<void> => {
      // As @fastify/swagger itself refuses: before ready, the shared schemas are not all known.
      if (!ready) throw new Error('.swagger() must be called after .ready()');
      const { fastifySwagger } = await import('@fastify/swagger');
      const hooks: { onRoute: onRouteHookHandler[]; onRegister: onRegisterHookHandler[] } = {
        onRoute: [],
        onRegister: [],
      };
      const onReady: onReadyHookHandler[] = [];
      let decorated: Swagger | undefined;
      const target: RegistrationTarget = {
        addHook(name, hook) {
          if (name === 'onRoute') hooks.onRoute.push(hook as onRouteHookHandler);
          else if (name === 'onRegister') hooks.onRegister.push(hook as onRegisterHookHandler);
          else if (name === 'onReady') onReady.push(hook as onReadyHookHandler);
          else throw new Error(`@fastify/swagger added a ${name} hook, which is not replayed`);
        },
        decorate(_name, value) {
          decorated = value as Swagger;
        },
        getSchemas: () => scope.getSchemas(),
      };
      await new Promise<void>((resolve, reject) => {
        fastifySwagger(target as unknown as FastifyInstance, { ...options }, (error?: Error) =>
          error ? reject(error) : resolve(),
        );
      });
      for (const event of events) {
        if (event.kind === 'route') {
          for (const hook of hooks.onRoute) hook.call(scope, event.route);
        } else {
          for (const hook of hooks.onRegister) await hook.call(scope, event.instance, {});
        }
      }
      for (const hook of onReady) {
        await new Promise<void>((resolve, reject) => {
          void hook.call(scope, (error?: Error) => (error ? reject(error) : resolve()));
        });
      }
      if (decorated === undefined) throw new Error('@fastify/swagger decorated nothing');
      generate = decorated;
    };

    scope.decorate('loadSwagger', () => {
      if (generate !== undefined) return Promise.resolve();
      loading ??= load().catch((error: unknown) => {
        loading = undefined;
        throw error;
      });
      return loading;
    });
    scope.decorate('swagger', ((opts?: { yaml?: boolean }) => {
      if (generate === undefined) throw new Error('app.swagger() before app.loadSwagger()');
      return (generate as (opts?: { yaml?: boolean }) => unknown)(opts);
    }) as Swagger);
    done();
  };
  await app.register(fp(plugin, { fastify: '5.x', name: '@fastify/swagger' }));
}

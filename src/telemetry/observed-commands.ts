/** Told of every operation of a decorated port: its name, how long it took, whether it failed. */
export interface CommandObserver {
  commandDone(command: string, seconds: number, failed: boolean): void;
}

type Method = (...args: unknown[]) => unknown;

/** Named apart: they are not a round trip to the dependency, or not one worth timing. */
const UNTIMED = new Set<PropertyKey>(['close', 'constructor']);

/**
 * The port with each of its methods timed, the method's name as the command. A proxy rather than
 * a class implementing the port, so that a method added to the port is timed too without a change
 * here. Methods run on the port itself (private fields keep working); the names are the port's
 * methods, a bounded set.
 */
export function observeCommands<T extends object>(port: T, observer: CommandObserver): T {
  const timed = new Map<string, Method>();
  return new Proxy(port, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function' || typeof property !== 'string' || UNTIMED.has(property)) {
        return typeof value === 'function' ? (value as Method).bind(target) : value;
      }
      let method = timed.get(property);
      if (method === undefined) {
        method = timedMethod(target, property, value as Method, observer);
        timed.set(property, method);
      }
      return method;
    },
  });
}

function timedMethod(target: object, name: string, method: Method, observer: CommandObserver) {
  return (...args: unknown[]): unknown => {
    const started = performance.now();
    const done = (failed: boolean) =>
      observer.commandDone(name, (performance.now() - started) / 1000, failed);
    let result: unknown;
    try {
      result = method.apply(target, args);
    } catch (error) {
      done(true);
      throw error;
    }
    if (!(result instanceof Promise)) {
      done(false);
      return result;
    }
    return result.then(
      (value: unknown) => {
        done(false);
        return value;
      },
      (error: unknown) => {
        done(true);
        throw error;
      },
    );
  };
}

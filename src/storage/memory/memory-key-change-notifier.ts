import type { KeyChangeNotifier } from '../../domain/ports.js';

type Listener = (keyId: string) => void;

/**
 * Key changes within this one process, for a single instance (REDIS_URL tells every instance).
 * A publish reaches every listener before it resolves.
 */
export class MemoryKeyChangeNotifier implements KeyChangeNotifier {
  private readonly listeners = new Set<Listener>();

  /** `onError` hears of a listener that threw; the other listeners are called all the same. */
  constructor(private readonly options: { onError?: (error: Error) => void } = {}) {}

  async publish(keyId: string): Promise<void> {
    for (const listener of [...this.listeners]) {
      try {
        listener(keyId);
      } catch (error) {
        this.options.onError?.(error instanceof Error ? error : new Error(String(error)));
      }
    }
  }

  async subscribe(listener: Listener): Promise<void> {
    this.listeners.add(listener);
  }

  async close(): Promise<void> {
    this.listeners.clear();
  }
}

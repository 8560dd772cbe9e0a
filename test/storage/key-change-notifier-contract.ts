import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KeyChangeNotifier } from '../../src/domain/ports.js';

/** Two instances of the service: the one that changed a key, and one that caches it. */
export interface NotifierPair {
  publisher: KeyChangeNotifier;
  subscriber: KeyChangeNotifier;
}

/** Waits until `check` is true, trying every 10 ms; throws after `timeoutMs`. */
async function until(what: string, check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * What every key-change notifier must do, run against each backend. `open` gives two instances
 * (for a single-process backend, the same notifier twice); each test opens its own pair.
 */
export function describeKeyChangeNotifierContract(
  name: string,
  open: () => Promise<NotifierPair>,
): void {
  describe(`KeyChangeNotifier contract: ${name}`, () => {
    const pairs: NotifierPair[] = [];
    const pair = async () => {
      const opened = await open();
      pairs.push(opened);
      return opened;
    };
    afterAll(async () => {
      for (const { publisher, subscriber } of pairs) {
        await publisher.close();
        await subscriber.close();
      }
    });

    describe('with a subscriber', () => {
      let notifiers: NotifierPair;
      const heard: string[] = [];
      const heardToo: string[] = [];
      beforeAll(async () => {
        notifiers = await pair();
        await notifiers.subscriber.subscribe((id) => heard.push(id));
        await notifiers.subscriber.subscribe((id) => heardToo.push(id));
      });

      it('tells every listener of the other instance which key changed, in order', async () => {
        const ids: string[] = [randomUUID(), randomUUID(), randomUUID()];
        for (const id of ids) await notifiers.publisher.publish(id);
        await until('every id heard', () => ids.every((id) => heard.includes(id)));
        await until('every id heard by the second listener', () =>
          ids.every((id) => heardToo.includes(id)),
        );
        expect(heard.filter((id) => ids.includes(id))).toEqual(ids);
      });
    });

    it('keeps telling the other listeners when one throws', async () => {
      const { publisher, subscriber } = await pair();
      const heard: string[] = [];
      await subscriber.subscribe(() => {
        throw new Error('a broken listener');
      });
      await subscriber.subscribe((id) => heard.push(id));
      const ids = [randomUUID(), randomUUID()];
      for (const id of ids) await publisher.publish(id);
      await until('both ids heard', () => ids.every((id) => heard.includes(id)));
    });

    it('tells a listener only of changes published after it subscribed', async () => {
      const { publisher, subscriber } = await pair();
      const before = randomUUID();
      await publisher.publish(before);
      const heard: string[] = [];
      await subscriber.subscribe((id) => heard.push(id));
      const after = randomUUID();
      await publisher.publish(after);
      await until('the later id heard', () => heard.includes(after));
      expect(heard).toEqual([after]);
    });

    it('tells no listener once the subscriber is closed', async () => {
      const { publisher, subscriber } = await pair();
      const heard: string[] = [];
      await subscriber.subscribe((id) => heard.push(id));
      await subscriber.close();
      // A listener on the publishing instance shows when the change has gone out.
      const witnessed: string[] = [];
      await publisher.subscribe((id) => witnessed.push(id));
      const id = randomUUID();
      await publisher.publish(id);
      await until('the publishing instance heard it', () => witnessed.includes(id));
      await new Promise((r) => setTimeout(r, 50));
      expect(heard).toEqual([]);
    });
  });
}

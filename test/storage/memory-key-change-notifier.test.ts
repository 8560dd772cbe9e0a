import { describe, expect, it } from 'vitest';
import { MemoryKeyChangeNotifier } from '../../src/storage/memory/memory-key-change-notifier.js';
import { describeKeyChangeNotifierContract } from './key-change-notifier-contract.js';

describeKeyChangeNotifierContract('memory', async () => {
  const notifier = new MemoryKeyChangeNotifier();
  return { publisher: notifier, subscriber: notifier };
});

describe('MemoryKeyChangeNotifier', () => {
  it('has told every listener by the time publish resolves', async () => {
    const notifier = new MemoryKeyChangeNotifier();
    const heard: string[] = [];
    await notifier.subscribe((id) => heard.push(id));
    await notifier.publish('k1');
    expect(heard).toEqual(['k1']);
  });

  it('reports a listener that throws, and does not reject the publish', async () => {
    const errors: Error[] = [];
    const notifier = new MemoryKeyChangeNotifier({ onError: (error) => errors.push(error) });
    await notifier.subscribe(() => {
      throw new Error('a broken listener');
    });
    await expect(notifier.publish('k1')).resolves.toBeUndefined();
    expect(errors.map((e) => e.message)).toEqual(['a broken listener']);
  });

  it('never calls a listener of another notifier: it is one process, not a network', async () => {
    const a = new MemoryKeyChangeNotifier();
    const b = new MemoryKeyChangeNotifier();
    const heard: string[] = [];
    await b.subscribe((id) => heard.push(id));
    await a.publish('k1');
    expect(heard).toEqual([]);
  });
});

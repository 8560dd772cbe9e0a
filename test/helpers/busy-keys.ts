import type { Storage } from '../../src/domain/ports.js';
import { overlayStorage } from './storage-overlay.js';

/**
 * Idempotency-Keys that storage answers as held by another request still running (on another
 * instance, say): the 409 case, which a single SQLite writer never shows on its own. PostgreSQL's
 * real lock wait is tested in test/storage/postgres-storage.test.ts.
 */
export function withBusyKeys(busy: ReadonlySet<string>): (storage: Storage) => Storage {
  return (storage) =>
    overlayStorage(storage, {
      pets: {
        createIdempotent: (input, request) =>
          busy.has(request.scope.key)
            ? Promise.resolve({ kind: 'in_progress' })
            : storage.pets.createIdempotent(input, request),
      },
    });
}

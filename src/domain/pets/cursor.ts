import { domainErrors } from '../errors.js';
import { isPetStatus, MAX_PET_ID, type PetStatus } from './pet.js';

/**
 * Keyset position for GET /pets: the last id served and the filter it was served under. Opaque to
 * clients (base64url), and bound to the filter so a cursor cannot silently skip pets of another one.
 */
const VERSION = 'p1';

export function encodeCursor(afterId: number, status: PetStatus | undefined): string {
  return Buffer.from(`${VERSION}|${afterId}|${status ?? ''}`).toString('base64url');
}

export function decodeCursor(cursor: string, status: PetStatus | undefined): number {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(cursor)) throw domainErrors.invalidCursor();
  const [version, id, filter, ...rest] = Buffer.from(cursor, 'base64url').toString().split('|');
  if (version !== VERSION || rest.length > 0 || id === undefined || !/^\d{1,16}$/.test(id)) {
    throw domainErrors.invalidCursor();
  }
  const afterId = Number(id);
  if (afterId > MAX_PET_ID || (filter !== '' && !isPetStatus(filter))) {
    throw domainErrors.invalidCursor();
  }
  if ((filter || undefined) !== status) {
    throw domainErrors.cursorOfOtherFilter(filter || undefined);
  }
  return afterId;
}

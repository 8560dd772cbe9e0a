/**
 * getPet (GET /pets/{petId}) is deprecated and removed on 5 December 2030 (interface text).
 * Deprecated since the interface's 1.0.0 publication date below, as RFC 9745 asks for a past date.
 */
export const GET_PET_DEPRECATED_AT = Date.UTC(2026, 0, 1);
export const GET_PET_SUNSET_AT = Date.UTC(2030, 11, 5);

export function isGetPetGone(now: number): boolean {
  return now >= GET_PET_SUNSET_AT;
}

import { domainErrors } from '../errors.js';

/**
 * getPet (GET /pets/{petId}) is deprecated and removed on 5 December 2030 (interface text).
 * Deprecated since the interface's 1.0.0 publication date below, as RFC 9745 asks for a past date.
 */
export const GET_PET_DEPRECATED_AT = Date.UTC(2026, 0, 1);
export const GET_PET_SUNSET_AT = Date.UTC(2030, 11, 5);
/** The sunset as an HTTP-date (RFC 8594's Sunset header, and the words of the 410). */
export const GET_PET_SUNSET_HTTP_DATE = new Date(GET_PET_SUNSET_AT).toUTCString();

export function isGetPetGone(now: number): boolean {
  return now >= GET_PET_SUNSET_AT;
}

export const getPetGone = () =>
  domainErrors.operationGone(
    'GET /v1/pets/{petId}',
    GET_PET_SUNSET_HTTP_DATE,
    'GET /v1/pets with a status filter',
  );

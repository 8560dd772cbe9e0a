import { expect } from 'vitest';
import { ERRORS } from '../../src/http/errors/error-table.js';
import type { RawResponse } from './raw-http.js';

/** The Error contract: every response the service sends, whoever refused the request. */
export function expectErrorContract(res: RawResponse, code: string, status: number): void {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.headers['x-content-type-options']).toBe('nosniff');
  expect(res.headers['x-request-id']).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
  const body = JSON.parse(res.body) as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(['code', 'message', 'status']);
  expect(body).toMatchObject({ code, status });
  expect(ERRORS[code as keyof typeof ERRORS]?.status).toBe(status);
  expect(body.message).toMatch(/^[A-Z].{10,}/);
}

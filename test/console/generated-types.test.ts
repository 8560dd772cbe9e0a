import { readFileSync, writeFileSync } from 'node:fs';
import openapiTS, { astToString } from 'openapi-typescript';
import { describe, expect, it } from 'vitest';
import { adminCall, useAdminServer } from '../http/admin/admin-server.js';

const TARGET = new URL('../../console/src/generated/admin-api.ts', import.meta.url);
const HEADER = `/**
 * Generated from GET /admin/v1/openapi.json by openapi-typescript; do not edit.
 * Regenerate with: npm run generate:console (a test fails while it is out of date).
 */
`;

const server = useAdminServer();

describe('the console types', () => {
  it('are generated from the live admin OpenAPI document, and up to date', async () => {
    const res = await adminCall(server(), 'GET', '/admin/v1/openapi.json');
    expect(res.status).toBe(200);
    const ast = await openapiTS(res.text, { exportType: true });
    const generated = HEADER + astToString(ast);
    if (process.env.UPDATE_CONSOLE_TYPES === '1') writeFileSync(TARGET, generated);
    expect(readFileSync(TARGET, 'utf8'), 'run npm run generate:console').toBe(generated);
  });
});

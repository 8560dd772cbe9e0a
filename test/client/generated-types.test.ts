import { readFileSync, writeFileSync } from 'node:fs';
import openapiTS, { astToString } from 'openapi-typescript';
import { describe, expect, it } from 'vitest';
import { call, useServer } from '../helpers/test-server.js';

const TARGET = new URL('../../packages/client/src/generated/openapi.ts', import.meta.url);
const HEADER = `/**
 * Generated from GET /v1/openapi.json by openapi-typescript; do not edit.
 * Regenerate with: npm run generate:client (a test fails while it is out of date).
 */
`;

const server = useServer();

describe('the client types', () => {
  it('are generated from the live OpenAPI document, and up to date', async () => {
    const res = await call(server(), 'GET', '/v1/openapi.json');
    expect(res.status).toBe(200);
    const ast = await openapiTS(res.text, { exportType: true });
    const generated = HEADER + astToString(ast);
    if (process.env.UPDATE_CLIENT_TYPES === '1') writeFileSync(TARGET, generated);
    expect(readFileSync(TARGET, 'utf8'), 'run npm run generate:client').toBe(generated);
  });
});

import { describe } from 'vitest';
import { describeAuthSuite, type RouteUnderTest } from '../helpers/auth-suite.js';
import { useServer } from '../helpers/test-server.js';

const server = useServer();

const routes: RouteUnderTest[] = [
  { method: 'GET', path: '/v1/pets', okStatus: 200 },
  { method: 'POST', path: '/v1/pets', body: { name: 'Auth', categoryId: 1 }, okStatus: 201 },
  { method: 'GET', path: '/v1/pets/9007199254740991', okStatus: 404 },
  { method: 'GET', path: '/v1/unknown', okStatus: 404 },
  { method: 'DELETE', path: '/v1/pets', okStatus: 405 },
];

describe('the shared authentication suite, on every route under /v1', () => {
  for (const route of routes) describeAuthSuite(server, route);
});

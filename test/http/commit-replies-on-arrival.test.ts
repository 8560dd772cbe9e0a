import { describe, expect, it, vi } from 'vitest';
import { call, TEST_BACKEND, useServer } from '../helpers/test-server.js';

/**
 * The server asks storage for the replies of writes whose commit ended as each request arrives
 * (Storage.pollCommitReplies, src/http/server/api-server.ts), whatever the request and however it ends:
 * an acknowledged create is answered then, not at the event loop's next poll.
 */
const server = useServer();

describe('commit replies taken as requests arrive', () => {
  it.runIf(TEST_BACKEND === 'sqlite')(
    'asks storage once per request, answered or refused',
    async () => {
      const { key } = await server().createKey('business');
      const poll = vi.spyOn(server().storage, 'pollCommitReplies');
      try {
        const answers = [
          await call(server(), 'GET', '/v1/pets?limit=1', { key }),
          await call(server(), 'POST', '/v1/pets', {
            key,
            body: { name: 'Arrived', categoryId: 1 },
          }),
          await call(server(), 'GET', '/v1/pets'),
          await call(server(), 'GET', '/healthz'),
        ];
        expect(answers.map((res) => res.status)).toEqual([200, 201, 401, 200]);
        expect(poll).toHaveBeenCalledTimes(4);
      } finally {
        poll.mockRestore();
      }
    },
  );
});

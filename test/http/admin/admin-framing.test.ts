import { describe, expect, it } from 'vitest';
import { expectErrorContract } from '../../helpers/error-contract.js';
import { rawRequest } from '../../helpers/raw-http.js';
import { useAdminServer } from './admin-server.js';

const server = useAdminServer();

/** Issue 34 item 8, on the admin listener: refused for its framing, and counted like a guess. */
describe('admin listener: a request refused for its target or framing', () => {
  it('is answered 400 with the Error body, and drawn from the address budget until 429', async () => {
    const absolute = 'GET http://x/admin/v1/keys HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n';
    const first = await rawRequest(server().admin.url, absolute, { localAddress: '127.0.0.90' });
    expectErrorContract(first, 'bad_request', 400);
    let status = first.status;
    for (let i = 0; i < 60 && status !== 429; i++) {
      status = (await rawRequest(server().admin.url, absolute, { localAddress: '127.0.0.90' }))
        .status;
    }
    expect(status).toBe(429);
    server().pets.clock.advance(60_000);
  });
});

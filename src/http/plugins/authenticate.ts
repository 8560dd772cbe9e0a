import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ApiKeyRecord } from '../../domain/api-keys/api-key.js';
import type { ApiKeyService, AuthResult } from '../../domain/api-keys/api-key-service.js';
import { HttpError } from '../errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified API key; set by the authenticate hook on every /v1 operation. */
    apiKey: ApiKeyRecord | undefined;
  }
}

const REALM = 'Bearer realm="pets"';
const MESSAGES: Record<Exclude<AuthResult, { ok: true }>['reason'], string> = {
  missing: 'Missing API key: send it as Authorization: Bearer <key>',
  malformed:
    'API key is not valid: expected Authorization: Bearer pa_live_ followed by 36 letters and digits',
  unknown: 'API key is not valid: check it was copied whole, or create a new one',
  revoked: 'API key has been revoked: create a new one',
};

/** RFC 6750: the scheme word is case-insensitive; one token follows it. */
function bearerToken(header: string | undefined): { token?: string; sent: boolean } {
  if (header === undefined) return { sent: false };
  const match = /^Bearer +([^ ]*) *$/i.exec(header);
  return { token: match?.[1], sent: true };
}

export function requireApiKey(app: FastifyInstance, keys: ApiKeyService): void {
  app.decorateRequest('apiKey', undefined);
  app.addHook('onRequest', async (request: FastifyRequest) => {
    const { token, sent } = bearerToken(request.headers.authorization);
    const result =
      sent && !token
        ? ({ ok: false, reason: 'malformed' } as const)
        : await keys.authenticate(token);
    if (!result.ok) {
      const challenge = result.reason === 'missing' ? REALM : `${REALM}, error="invalid_token"`;
      throw new HttpError('unauthorized', MESSAGES[result.reason], {
        'www-authenticate': challenge,
      });
    }
    request.apiKey = result.key;
  });
}

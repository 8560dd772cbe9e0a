import type { FastifyReply, FastifyRequest } from 'fastify';
import type {
  AdminAdmissionService,
  AdminRefusal,
} from '../../../domain/admin-tokens/admin-admission.js';
import type { AdminTokenRecord } from '../../../domain/admin-tokens/admin-token.js';
import { clientAddress } from '../../../domain/rate-limits/client-address.js';
import { credentialOf } from '../public/api-key-guard.js';
import { type HttpError, httpErrors } from '../../errors/http-error.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified admin token; set by the admin guard on every operation of the admin scope. */
    adminToken: AdminTokenRecord | undefined;
    /** The bearer token as sent (seals idempotent responses); never logged nor stored. */
    adminTokenSecret: string | undefined;
  }
}

export type AdminGuard = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

/**
 * Every request of the admin scope, known path or not: asks the admin admission service and
 * translates its decision to HTTP. `access: 'address'` is the document, open to the address budget.
 */
export function createAdminGuard(
  admission: AdminAdmissionService,
  access: 'admin_token' | 'address',
): AdminGuard {
  return async (request) => {
    // As the pet guard counts: a forwarded value that is not an address draws on the connection's.
    const address = clientAddress(request.ip, request.socket.remoteAddress ?? request.ip);
    if (access === 'address') {
      const decision = await admission.admitAddress(address);
      if (!decision.admitted && 'refusal' in decision) throw httpRefusal(decision.refusal);
      return;
    }
    const credential = credentialOf(request.raw);
    const decision = await admission.admit(credential, address);
    if (!decision.admitted) throw httpRefusal(decision.refusal);
    request.adminToken = decision.token;
    request.adminTokenSecret = credential.kind === 'bearer' ? credential.token : undefined;
  };
}

function httpRefusal(refusal: AdminRefusal): HttpError {
  switch (refusal.code) {
    case 'unauthorized':
      return httpErrors.adminUnauthorized(refusal.reason);
    case 'ambiguous_credential':
      return httpErrors.duplicateAuthorization();
    case 'rate_limited':
      return httpErrors.addressRateLimited(
        refusal.window.limit,
        refusal.window.name,
        refusal.retryAfterSeconds,
      );
  }
}

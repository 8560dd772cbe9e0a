import { describe, expect, it } from 'vitest';
import type { NewKeyResult } from '../../../src/domain/api-keys/key-management-service.js';
import { parseAuditLine } from '../../../src/cli/audit-lines.js';
import { adminCall, useAdminServer } from './admin-server.js';

const lines: string[] = [];
const server = useAdminServer({ logLines: lines });

/** The key audit lines logged so far for one key. */
function auditLinesOf(keyId: string) {
  return lines.filter((line) => parseAuditLine(line)?.keyId === keyId);
}

describe('key audit log lines (admin API)', () => {
  it('logs each change once as a "key audit" line, with no secret or hash, that replay can read', async () => {
    const { token } = await server().createToken('ops');
    const create = await adminCall(server(), 'POST', '/admin/v1/keys', {
      key: token,
      body: { plan: 'free', name: 'audited' },
    });
    expect(create.status).toBe(201);
    const made = create.body as NewKeyResult;
    const id = made.key.id;
    expect(auditLinesOf(id).map((line) => parseAuditLine(line)?.action)).toEqual(['create']);

    const revoke = await adminCall(server(), 'POST', `/admin/v1/keys/${id}/revoke`, { key: token });
    expect(revoke.status).toBe(200);
    // Revoking again keeps (and audits) only the first revocation: still one revoke line.
    await adminCall(server(), 'POST', `/admin/v1/keys/${id}/revoke`, { key: token });
    const revokes = auditLinesOf(id).filter((line) => parseAuditLine(line)?.action === 'revoke');
    expect(revokes).toHaveLength(1);

    const line = JSON.parse(revokes[0] ?? '{}') as { msg: string; level: number; audit: unknown };
    expect(line.msg).toBe('key audit');
    expect(line.level).toBe(30);
    expect(line.audit).toMatchObject({
      keyId: id,
      action: 'revoke',
      actor: { kind: 'admin_token' },
      changes: { revokedAt: { from: null } },
    });
    const all = auditLinesOf(id).join('\n');
    expect(all).not.toContain(made.secret);
    expect(all).not.toContain(made.secret.slice(8));
    expect(all).not.toMatch(/"hash"/);
  });
});

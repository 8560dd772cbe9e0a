import { Type, type TSchema } from '@sinclair/typebox';
import { ErrorSchema } from './error.schema.js';
import { ERROR_STATUS, type ErrorCode } from './errors.js';

type HeaderDoc = Record<string, { description: string; schema: { type: string; format?: string } }>;

/** A response as both Fastify's serializer and the OpenAPI document read it. */
export function jsonResponse(description: string, schema: TSchema, headers?: HeaderDoc) {
  return {
    description,
    ...(headers ? { headers } : {}),
    content: { 'application/json': { schema } },
  };
}

/** Error responses documented for an operation, each listing the codes it can carry. */
export function errorResponses(codes: readonly ErrorCode[]) {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of [...codes, 'internal_error' as const]) {
    const status = ERROR_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<number, ReturnType<typeof jsonResponse>> = {};
  for (const [status, list] of byStatus) {
    responses[status] = jsonResponse(`Error: ${list.join(', ')}`, Type.Ref(ErrorSchema));
  }
  return responses;
}

import { Type } from '@sinclair/typebox';
import { ERROR_STATUS, type ErrorCode } from './errors.js';

export const ErrorSchema = Type.Object(
  {
    // An enum in the document, so generated clients get the codes as a union type.
    code: Type.Unsafe<ErrorCode>({
      type: 'string',
      enum: Object.keys(ERROR_STATUS),
      description: 'Machine-readable error code (see the error table).',
    }),
    message: Type.String({ description: 'What went wrong and what to do about it.' }),
    status: Type.Integer({ description: 'The HTTP status code of the response.' }),
  },
  {
    $id: 'Error',
    additionalProperties: false,
    // Each error response of the document shows its own codes (src/http/plugins/openapi.ts).
    examples: [{ code: 'not_found', message: 'No pet has id 7', status: 404 }],
  },
);

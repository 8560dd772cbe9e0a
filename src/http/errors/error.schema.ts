import { Type } from '@sinclair/typebox';
import { ERROR_CODES, errorBody, ERRORS } from './error-table.js';
import type { ErrorCode } from './http-error.js';

export const ErrorSchema = Type.Object(
  {
    // An enum in the document, so generated clients get the codes as a union type.
    code: Type.Unsafe<ErrorCode>({
      type: 'string',
      enum: ERROR_CODES,
      description: 'Machine-readable error code (see the error table).',
    }),
    message: Type.String({ description: 'What went wrong and what to do about it.' }),
    status: Type.Integer({ description: 'The HTTP status code of the response.' }),
  },
  {
    $id: 'Error',
    additionalProperties: false,
    // Each error response of the document shows its own codes (src/http/openapi/openapi-responses.ts).
    examples: [errorBody(ERRORS.not_found.example)],
  },
);

import { Type } from '@sinclair/typebox';

export const ErrorSchema = Type.Object(
  {
    code: Type.String({ description: 'Machine-readable error code (see the error table).' }),
    message: Type.String({ description: 'What went wrong and what to do about it.' }),
    status: Type.Integer({ description: 'The HTTP status code of the response.' }),
  },
  { $id: 'Error', additionalProperties: false },
);

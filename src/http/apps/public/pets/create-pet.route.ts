import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { describeDuration } from '../../../../config/durations.js';
import { IDEMPOTENCY_RETENTION_MS, type PetService } from '../../../../domain/pets/pet-service.js';
import { httpErrors } from '../../../errors/http-error.js';
import { errorResponses, jsonResponse, scopeSecurity } from '../../../openapi/openapi-responses.js';
import { apiPath } from '../../../scopes.js';
import { problems } from '../../../validation/validator-compiler.js';
import {
  IDEMPOTENCY_KEY_MAX_LENGTH,
  IdempotencyHeadersSchema,
  NewPetSchema,
  PetSchema,
} from './pet.schema.js';

export function registerCreatePet(app: FastifyInstance, pets: PetService): void {
  app.withTypeProvider<TypeBoxTypeProvider>().post(
    '/pets',
    {
      schema: {
        operationId: 'createPet',
        security: scopeSecurity('createPet'),
        summary: 'Add a pet',
        description:
          'Creates a pet. Send an `Idempotency-Key` to retry safely: the same key and body within ' +
          `${describeDuration(IDEMPOTENCY_RETENTION_MS)} return the first response again, with ` +
          '`Idempotent-Replayed: true`.',
        tags: ['Pets'],
        headers: IdempotencyHeadersSchema,
        body: Type.Ref(NewPetSchema),
        response: {
          201: jsonResponse('The pet was added; the body carries its id.', Type.Ref(PetSchema), {
            Location: { description: 'Path of the new pet.', schema: { type: 'string' } },
            'Idempotent-Replayed': {
              description:
                '`true` when this is the stored response of an earlier request with the same Idempotency-Key.',
              schema: { type: 'string' },
            },
          }),
          ...errorResponses(
            [
              'invalid_body',
              'invalid_json',
              'invalid_parameter',
              'unauthorized',
              'insufficient_scope',
              'idempotency_key_in_use',
              'payload_too_large',
              'unsupported_media_type',
              'idempotency_key_reused',
            ],
            {
              invalid_parameter: httpErrors.invalidParameter(
                problems.stringLength('idempotency-key', 1, IDEMPOTENCY_KEY_MAX_LENGTH),
              ),
            },
          ),
        },
      },
    },
    async (request, reply) => {
      const apiKey = request.apiKey;
      if (apiKey === undefined) throw new Error('createPet reached without an authenticated key');
      const key = request.headers['idempotency-key'];
      const { name, categoryId, status } = request.body;
      const result = await pets.create(
        { name, categoryId, ...(status ? { status } : {}) },
        key === undefined ? undefined : { apiKeyId: apiKey.id, key },
      );
      if (result.replayed) void reply.header('idempotent-replayed', 'true');
      return reply
        .code(201)
        .header('location', apiPath(`/pets/${result.pet.id}`))
        .send(result.pet);
    },
  );
}

import type { FastifyReply } from 'fastify';
import type { KeptCopy } from '../domain/pets/store-copies.js';

/**
 * How the routes turn the copies that src/domain/pets/store-copies.ts keeps (and says when they
 * may be kept) into responses: serialized once, sent as they are.
 */

/** The route's own 200 serializer (its response schema), whose JSON output is always text. */
export function serialize(reply: FastifyReply, value: object): string {
  const body: unknown = reply.serializeInput(
    value as Record<string, unknown>,
    '200',
    'application/json',
  );
  if (typeof body !== 'string') throw new Error('a JSON serializer returned bytes');
  return body;
}

/** Sends a serialized body as it is (Fastify does not serialize a string again). */
export function sendCached(reply: FastifyReply, answer: KeptCopy): FastifyReply {
  if (answer.link !== undefined) void reply.header('link', answer.link);
  return reply.type(JSON_TYPE).send(answer.body);
}

export const JSON_TYPE = 'application/json; charset=utf-8';

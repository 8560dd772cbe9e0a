import type { FastifyReply } from 'fastify';
import type { KeptCopy } from '../../domain/pets/store-copies.js';

/**
 * How the routes turn the copies that src/domain/pets/store-copies.ts keeps (and says when they
 * may be kept) into responses: serialized once, sent as they are.
 */

/** A route's own 200 serializer (its response schema), whose JSON output is always text. */
export type Serializer = (value: object) => string;

/** The 200 serializer of the route that `reply` answers for. */
export function serializerOf(reply: FastifyReply): Serializer {
  const compiled = reply.getSerializationFunction('200', 'application/json');
  if (compiled === undefined) throw new Error('the route has no 200 JSON serializer');
  return (value) => {
    const body: unknown = compiled(value as Record<string, unknown>);
    if (typeof body !== 'string') throw new Error('a JSON serializer returned bytes');
    return body;
  };
}

/** The route's own 200 serializer (its response schema), whose JSON output is always text. */
export function serialize(reply: FastifyReply, value: object): string {
  return serializerOf(reply)(value);
}

/** Sends a serialized body as it is (Fastify does not serialize a string again). */
export function sendCached(reply: FastifyReply, answer: KeptCopy): FastifyReply {
  if (answer.link !== undefined) void reply.header('link', answer.link);
  return reply.type(JSON_TYPE).send(answer.body);
}

export const JSON_TYPE = 'application/json; charset=utf-8';

import type { FastifyReply } from 'fastify';

/**
 * Response bodies that can never change, kept serialized so a repeated request is answered without
 * storage or serialization: a pet (v1 neither updates nor deletes one) and a full page of a listing
 * whose pets have all settled (the domain says which). Least recently used entries go first once
 * the bodies exceed the budget, so memory stays bounded whatever the data size.
 */
export interface CachedResponse {
  readonly body: string;
  /** The Link header of a page, when it has one. */
  readonly link?: string;
}

export class ResponseCache {
  private readonly entries = new Map<string, CachedResponse>();
  private bytes = 0;

  constructor(private readonly budgetBytes: number) {}

  get(key: string): CachedResponse | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    // Re-inserting moves it to the back of the eviction order (Map keeps insertion order).
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry;
  }

  set(key: string, entry: CachedResponse): void {
    const size = sizeOf(key, entry);
    if (size > this.budgetBytes) return;
    const previous = this.entries.get(key);
    if (previous !== undefined) {
      this.bytes -= sizeOf(key, previous);
      this.entries.delete(key);
    }
    this.entries.set(key, entry);
    this.bytes += size;
    for (const [oldKey, oldEntry] of this.entries) {
      if (this.bytes <= this.budgetBytes) break;
      this.entries.delete(oldKey);
      this.bytes -= sizeOf(oldKey, oldEntry);
    }
  }

  /** For tests and metrics. */
  get size(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.bytes };
  }
}

/** Strings take two bytes a character in the worst case, plus the entry's own overhead. */
function sizeOf(key: string, entry: CachedResponse): number {
  return 2 * (key.length + entry.body.length + (entry.link?.length ?? 0)) + 100;
}

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
export function sendCached(reply: FastifyReply, answer: CachedResponse): FastifyReply {
  if (answer.link !== undefined) void reply.header('link', answer.link);
  return reply.type(JSON_TYPE).send(answer.body);
}

const JSON_TYPE = 'application/json; charset=utf-8';

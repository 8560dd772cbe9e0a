import {
  ApiKeyBannedError,
  InsufficientScopeError,
  PetApiError,
  PetClientError,
} from './errors.js';
import { parseJson, stringifyJson } from './json.js';
import { type Quota, readQuota } from './quota.js';
import type { ErrorBody, ErrorCode, Int64Mode, ListPetsQuery, NewPet, Pet } from './types.js';

export interface RetryOptions {
  /** Retries after the first attempt (default 4). */
  maxRetries?: number;
  /** First backoff step; doubles on each retry (default 500 ms). */
  baseDelayMs?: number;
  /** Cap of the exponential step (default 30 s). */
  maxDelayMs?: number;
  /** Random extra wait added to each, so clients do not return in step (default up to 1 s). */
  jitterMs?: number;
  /**
   * The longest single wait the client accepts (default 60 s). When `Retry-After` asks for more
   * (a used-up day), it throws the 429 instead of sleeping for hours.
   */
  maxWaitMs?: number;
}

export interface PetClientOptions<M extends Int64Mode> {
  /** Where the API lives, with or without the trailing `/v1`, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  apiKey: string;
  /** `'bigint'` returns ids and categoryIds as bigints, exact beyond 2^53. Default `'number'`. */
  int64?: M;
  retry?: RetryOptions;
  /** Defaults to the global fetch (Node 20+, browsers). */
  fetch?: typeof fetch;
  /**
   * Keep the answers of listPets and getPet with their `ETag`, per URL, and revalidate them
   * (`If-None-Match`): an unchanged answer comes back as a 304 without a body, and the kept one is
   * used. Off by default; `true` keeps up to 100 URLs, the least recently used leaving first.
   */
  cache?: boolean | { maxEntries?: number };
  /** For tests: how to wait, and the source of jitter. */
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

interface Attempt {
  method: 'GET' | 'POST';
  path: string;
  query?: URLSearchParams;
  body?: string;
  headers?: Record<string, string>;
  /** Safe to send again after a network error or 5xx: GETs, and POSTs with an Idempotency-Key. */
  repeatable: boolean;
  /** A 304 answers it too: the request revalidates a kept answer. */
  revalidates?: boolean;
}

/** A GET's answer as kept: its body text, its tag, and the Link of a page. */
interface Kept {
  readonly etag: string | null;
  readonly text: string;
  readonly link: string | null;
}

/**
 * The compressions the service sends. Node's fetch decodes them (a browser sets this header
 * itself and ignores the client's).
 */
const ACCEPT_ENCODING = 'br, gzip';

const RETRYABLE_STATUS = new Set([500, 502, 503, 504]);

function newIdempotencyKey(): string {
  const crypto = globalThis.crypto;
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** `Retry-After` as seconds (a number of seconds, or an HTTP date). */
function retryAfterSeconds(value: string | null, now: number): number | undefined {
  if (value === null) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}

/** The `rel="next"` target of a Link header. */
function nextLink(header: string | null): string | undefined {
  for (const part of (header ?? '').split(/,(?=\s*<)/)) {
    const match = /<([^>]*)>\s*;(.*)$/.exec(part.trim());
    if (match?.[1] && /rel="?([^";]*\s)?next(\s[^";]*)?"?/.test(match[2] ?? '')) return match[1];
  }
  return undefined;
}

/**
 * Client of the Pet Adoption Service v1. It keeps the interface's rules for you: it follows pages,
 * sends an Idempotency-Key with every create so retries never create twice, waits `Retry-After`
 * plus jitter on 429 with exponential backoff, stops at once on a ban, and reads int64s exactly.
 */
export class PetClient<M extends Int64Mode = 'number'> {
  private readonly base: string;
  private readonly fetch: typeof fetch;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly random: () => number;
  private readonly retry: Required<RetryOptions>;
  private readonly int64: Int64Mode;
  private lastQuota: Quota | undefined;
  /** The kept answers by URL, least recently used first (the `cache` option). */
  private readonly kept: Map<string, Kept> | undefined;
  private readonly keptMax: number;

  constructor(private readonly options: PetClientOptions<M>) {
    this.base = options.baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '') + '/v1';
    this.fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.random = options.random ?? Math.random;
    this.int64 = options.int64 ?? 'number';
    const cache = options.cache ?? false;
    this.kept = cache === false ? undefined : new Map();
    this.keptMax = cache === false || cache === true ? 100 : (cache.maxEntries ?? 100);
    this.retry = {
      maxRetries: 4,
      baseDelayMs: 500,
      maxDelayMs: 30_000,
      jitterMs: 1_000,
      maxWaitMs: 60_000,
      ...options.retry,
    };
  }

  /** The quota reported by the last response (`X-RateLimit-*` and `RateLimit`), if any. */
  get quota(): Quota | undefined {
    return this.lastQuota;
  }

  /** Every pet matching the query, page after page (follows `Link: rel="next"`). */
  async *listPets(query: ListPetsQuery = {}): AsyncGenerator<Pet<M>, void, undefined> {
    let params: URLSearchParams | undefined = new URLSearchParams();
    if (query.limit !== undefined) params.set('limit', String(query.limit));
    if (query.status !== undefined) params.set('status', query.status);
    while (params !== undefined) {
      const page = await this.listPetsPage(params);
      yield* page.pets;
      params = page.next;
    }
  }

  /** One page; `next` holds the query of the following page when more pets exist. */
  async listPetsPage(
    query: URLSearchParams | (ListPetsQuery & { cursor?: string }) = {},
  ): Promise<{ pets: Pet<M>[]; next: URLSearchParams | undefined }> {
    const params =
      query instanceof URLSearchParams
        ? query
        : new URLSearchParams(
            Object.entries(query).flatMap(([k, v]) => (v === undefined ? [] : [[k, String(v)]])),
          );
    const answer = await this.read({
      method: 'GET',
      path: '/pets',
      query: params,
      repeatable: true,
    });
    const pets = this.parse(answer.text, 200) as Pet<M>[];
    const link = nextLink(answer.link);
    // Only the query is taken from the link: the client keeps talking to the base URL it was given.
    return { pets, next: link === undefined ? undefined : new URL(link, this.base).searchParams };
  }

  /**
   * Adds a pet. An Idempotency-Key is sent (yours, or a fresh one), so the client retries a create
   * whose answer was lost and still creates one pet.
   */
  async createPet(pet: NewPet, options: { idempotencyKey?: string } = {}): Promise<Pet<M>> {
    const response = await this.send({
      method: 'POST',
      path: '/pets',
      body: stringifyJson(pet),
      headers: {
        'content-type': 'application/json',
        'idempotency-key': options.idempotencyKey ?? newIdempotencyKey(),
      },
      repeatable: true,
    });
    return (await this.json(response)) as Pet<M>;
  }

  /**
   * One pet by id.
   * @deprecated The API removes GET /pets/{petId} on 5 December 2030 (it then answers 410 gone).
   * Use {@link PetClient.listPets} with a status filter instead.
   */
  async getPet(id: number | bigint): Promise<Pet<M>> {
    const answer = await this.read({ method: 'GET', path: `/pets/${id}`, repeatable: true });
    return this.parse(answer.text, 200) as Pet<M>;
  }

  /** A GET, revalidating the answer kept for its URL when the cache is on. */
  private async read(attempt: Attempt): Promise<Kept> {
    const url = this.urlOf(attempt);
    const kept = this.kept?.get(url);
    const response = await this.send(
      kept?.etag
        ? { ...attempt, headers: { 'if-none-match': kept.etag }, revalidates: true }
        : attempt,
    );
    if (response.status === 304 && kept !== undefined) {
      // Most recently used now: to the end of the map's order.
      this.kept?.delete(url);
      this.kept?.set(url, kept);
      return kept;
    }
    const answer: Kept = {
      etag: response.headers.get('etag'),
      text: await response.text(),
      link: response.headers.get('link'),
    };
    if (this.kept !== undefined && answer.etag !== null) {
      this.kept.delete(url);
      this.kept.set(url, answer);
      if (this.kept.size > this.keptMax) {
        const oldest = this.kept.keys().next();
        if (oldest.done !== true) this.kept.delete(oldest.value);
      }
    }
    return answer;
  }

  private async json(response: Response): Promise<unknown> {
    return this.parse(await response.text(), response.status);
  }

  private parse(text: string, status: number): unknown {
    try {
      return parseJson(text, this.int64);
    } catch (error) {
      if (error instanceof PetClientError) throw error;
      throw new PetClientError(
        'invalid_response',
        `the API answered ${status} with a body that is not JSON`,
        { cause: error },
      );
    }
  }

  private backoff(retry: number): number {
    return Math.min(this.retry.maxDelayMs, this.retry.baseDelayMs * 2 ** retry);
  }

  private jitter(): number {
    return this.random() * this.retry.jitterMs;
  }

  private urlOf(attempt: Attempt): string {
    return `${this.base}${attempt.path}${attempt.query?.size ? `?${attempt.query}` : ''}`;
  }

  /**
   * Sends, and retries what the interface allows to retry. Resolves only with a 2xx, or a 304 to
   * a request that revalidates.
   */
  private async send(attempt: Attempt): Promise<Response> {
    const url = this.urlOf(attempt);
    for (let retry = 0; ; retry += 1) {
      const canRetry = retry < this.retry.maxRetries;
      let response: Response;
      try {
        response = await this.fetch(url, {
          method: attempt.method,
          headers: {
            accept: 'application/json',
            'accept-encoding': ACCEPT_ENCODING,
            authorization: `Bearer ${this.options.apiKey}`,
            ...attempt.headers,
          },
          ...(attempt.body === undefined ? {} : { body: attempt.body }),
        });
      } catch (cause) {
        if (!attempt.repeatable || !canRetry) {
          throw new PetClientError('network', `${attempt.method} ${url} failed: ${String(cause)}`, {
            cause,
          });
        }
        await this.sleep(this.backoff(retry) + this.jitter());
        continue;
      }
      this.lastQuota = readQuota(response.headers, new Date()) ?? this.lastQuota;
      if (response.ok || (response.status === 304 && attempt.revalidates === true)) {
        return response;
      }

      const error = await this.errorOf(response);
      if (error instanceof ApiKeyBannedError) throw error;
      if (error.code === 'rate_limited') {
        const wait =
          Math.max((error.retryAfterSeconds ?? 1) * 1000, this.backoff(retry)) + this.jitter();
        if (!canRetry || wait > this.retry.maxWaitMs) throw error;
        await this.sleep(wait);
        continue;
      }
      const transient =
        RETRYABLE_STATUS.has(response.status) || error.code === 'idempotency_key_in_use';
      if (transient && attempt.repeatable && canRetry) {
        await this.sleep(this.backoff(retry) + this.jitter());
        continue;
      }
      throw error;
    }
  }

  private async errorOf(response: Response): Promise<PetApiError> {
    const text = await response.text();
    let body: Partial<ErrorBody> = {};
    try {
      body = parseJson(text, 'number') as Partial<ErrorBody>;
    } catch {
      // A proxy's HTML error page: fall back to the status below.
    }
    const code: ErrorCode =
      typeof body.code === 'string'
        ? body.code
        : response.status >= 500
          ? 'internal_error'
          : 'bad_request';
    const message = typeof body.message === 'string' ? body.message : `HTTP ${response.status}`;
    const retryAfter = retryAfterSeconds(response.headers.get('retry-after'), Date.now());
    const requestId = response.headers.get('x-request-id') ?? undefined;
    if (code === 'insufficient_scope') {
      const challenge = response.headers.get('www-authenticate') ?? '';
      const scope = /\bscope="([^"]*)"/.exec(challenge)?.[1];
      return new InsufficientScopeError(code, message, response.status, requestId, scope);
    }
    return code === 'api_key_banned'
      ? new ApiKeyBannedError(code, message, response.status, retryAfter, requestId)
      : new PetApiError(code, message, response.status, retryAfter, requestId);
  }
}

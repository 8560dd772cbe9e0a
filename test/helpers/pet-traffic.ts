import { Agent } from 'node:http';
import { requestText } from './raw-http.js';

/** A pet as the API wrote it, with categoryId kept as its digits (it may be above 2^53). */
export interface WirePet {
  id: number;
  name: string;
  categoryId: string;
  status?: string;
}

/** Parses a Pet or a page of Pets without rounding categoryId. */
export function parsePets(text: string): WirePet[] {
  const parsed = JSON.parse(text.replace(/"categoryId":(\d+)/g, '"categoryId":"$1"')) as
    WirePet | WirePet[];
  return Array.isArray(parsed) ? parsed : [parsed];
}

/** One POST /v1/pets and what came of it. */
export interface SentCreate {
  name: string;
  /** The body exactly as sent; a retry sends the same bytes. */
  body: string;
  idempotencyKey?: string;
  /** Set once a response arrived. */
  status?: number;
  pet?: WirePet;
  replayed?: boolean;
  /** Set when the request got no response (the server died under it). */
  error?: string;
  /** Milliseconds from sending to the answer or the error. */
  ms?: number;
  /** The Retry-After header of the answer, if any. */
  retryAfter?: string | null;
  /** The error code of an answer other than 201, when its body is an Error. */
  code?: string;
}

const STATUSES = ['available', 'pending', 'sold', undefined] as const;

/** The i-th body of a run: names unique per run, int64 categoryIds above 2^53, some without status. */
function newPetBody(prefix: string, i: number): { name: string; body: string } {
  const name = `${prefix} ${i}`;
  const categoryId = i % 3 === 0 ? 9223372036854775807n - BigInt(i) : BigInt(1 + i);
  const status = STATUSES[i % STATUSES.length];
  const body =
    `{"name":${JSON.stringify(name)},"categoryId":${categoryId}` +
    `${status === undefined ? '' : `,"status":"${status}"`}}`;
  return { name, body };
}

/** The `code` of an Error body, or undefined when the body is not one. */
function errorCode(text: string): string | undefined {
  try {
    const code = (JSON.parse(text) as { code?: unknown } | null)?.code;
    return typeof code === 'string' ? code : undefined;
  } catch {
    return undefined;
  }
}

/** Connections kept between the creates of a file, as a client's would be. */
const agent = new Agent({ keepAlive: true });

export async function sendCreate(
  url: string,
  key: string,
  create: SentCreate,
  timeoutMs = 15_000,
): Promise<void> {
  const started = performance.now();
  try {
    const res = await requestText(`${url}/v1/pets`, {
      method: 'POST',
      agent,
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        ...(create.idempotencyKey === undefined
          ? {}
          : { 'idempotency-key': create.idempotencyKey }),
      },
      body: create.body,
      timeoutMs,
    });
    create.status = res.status;
    create.replayed = res.headers['idempotent-replayed'] === 'true';
    const retryAfter = res.headers['retry-after'];
    create.retryAfter = retryAfter ?? null;
    if (res.status === 201) create.pet = parsePets(res.text)[0];
    else create.code = errorCode(res.text);
  } catch (error) {
    create.error = error instanceof Error ? String(error.cause ?? error.message) : String(error);
  } finally {
    create.ms = performance.now() - started;
  }
}

export interface CreateTraffic {
  /** Every request sent so far, in the order they were started. */
  readonly sent: readonly SentCreate[];
  /** Requests answered 201 so far. */
  acknowledged(): SentCreate[];
  /** Resolves once `count` requests were answered 201. */
  untilAcknowledged(count: number, timeoutMs?: number): Promise<void>;
  /** Starts no more requests; resolves when every request sent has an answer or an error. */
  stop(): Promise<void>;
}

/**
 * Keeps `workers` creates in flight against the server, each with a unique name (and with
 * `idempotent`, a unique Idempotency-Key), until stopped.
 */
export function startCreating(
  url: string,
  key: string,
  options: { workers: number; prefix: string; idempotent: boolean },
): CreateTraffic {
  const sent: SentCreate[] = [];
  let stopped = false;
  const worker = async () => {
    while (!stopped) {
      const { name, body } = newPetBody(options.prefix, sent.length);
      const create: SentCreate = {
        name,
        body,
        ...(options.idempotent ? { idempotencyKey: `${options.prefix}-${sent.length}` } : {}),
      };
      sent.push(create);
      await sendCreate(url, key, create);
      // A server that died: nothing more to send to it.
      if (create.error !== undefined) return;
    }
  };
  const running = Promise.all(Array.from({ length: options.workers }, worker));
  const acknowledged = () => sent.filter((create) => create.status === 201);
  return {
    sent,
    acknowledged,
    async untilAcknowledged(count, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (acknowledged().length < count) {
        const failed = sent.find((create) => create.error !== undefined);
        if (failed) throw new Error(`a create failed before the kill: ${failed.error}`);
        if (Date.now() > deadline) throw new Error(`only ${acknowledged().length} acknowledged`);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    },
    async stop() {
      stopped = true;
      await running;
    },
  };
}

/** Every pet, walking the pages by their Link headers. */
export async function walkPets(url: string, key: string): Promise<WirePet[]> {
  const pets: WirePet[] = [];
  let next: string | undefined = `${url}/v1/pets?limit=100`;
  while (next !== undefined) {
    const res = await fetch(next, { headers: { authorization: `Bearer ${key}` } });
    if (res.status !== 200) throw new Error(`listing answered ${res.status}: ${await res.text()}`);
    pets.push(...parsePets(await res.text()));
    next = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get('link') ?? '')?.[1];
  }
  return pets;
}

/** A key whose limits no test traffic reaches, made with the CLI. */
export const UNLIMITED_KEY_ARGS = [
  '--plan',
  'enterprise',
  '--per-minute',
  '1000000',
  '--per-day',
  '1000000000',
];

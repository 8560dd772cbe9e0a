/**
 * The ceiling the service is compared with: a bare node:http server answering the benchmark's
 * requests with the bytes the service sends (the same JSON, the same header set, rate-limit headers
 * counted in memory), with no framework, validation, database or logging. Pets are the seed
 * command's own samplePet(i), built when first asked for; created pets live in memory, and the
 * answers to GETs that cannot change are kept by URL, as the service keeps its bodies.
 *
 * A process of its own, so that its CPU time is read from /proc like the service's. Started by
 * bench/main.ts with BENCH_BASELINE_CONFIG (JSON, see BaselineConfig).
 */
import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { samplePet } from '../src/cli/commands/seed.js';
import { decodeCursor, encodeCursor } from '../src/domain/pets/cursor.js';
import { GET_PET_DEPRECATED_AT, GET_PET_SUNSET_HTTP_DATE } from '../src/domain/pets/deprecation.js';
import { isPetStatus, type PetStatus } from '../src/domain/pets/pet.js';
import {
  EVERY_ANSWER_HEADERS,
  REVALIDATED_CACHE_CONTROL,
} from '../src/http/answers/response-headers.js';

export interface BaselineConfig {
  port: number;
  /** Pets 1..seeded exist from the start, as after `petstore seed --count seeded`. */
  seeded: number;
  /** An Authorization value accepted: `Bearer <key>`. */
  key: string;
  /** More keys accepted, one a line (bench --keys), each with its own rate-limit counters. */
  keysFile?: string;
  perMinute: number;
  perDay: number;
  /** This process assigns ids seeded + firstId, + idStep, ...: with two processes, 1 and 2, step 2. */
  firstId: number;
  idStep: number;
}

const JSON_TYPE = 'application/json; charset=utf-8';
const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
const PAGE_DEFAULT = 20;

interface StoredPet {
  id: number;
  status: PetStatus | undefined;
  /** The pet as the service serializes it. */
  json: string;
}

function toJson(id: number, name: string, categoryId: number, status?: PetStatus): string {
  return JSON.stringify(status ? { id, name, categoryId, status } : { id, name, categoryId });
}

type Headers = Record<string, string>;
type Answer = {
  status: number;
  body: string;
  headers?: Headers;
  /** A 200 of listPets or getPet: its tag, and its compressed bodies once made. */
  etag?: string;
  compressed?: { br?: Buffer; gzip?: Buffer };
};

/** A 200 of listPets or getPet, tagged as the service tags it (its own headers and body). */
function tagged(answer: Answer): Answer {
  if (answer.status !== 200) return answer;
  const hash = createHash('sha256');
  for (const [name, value] of Object.entries(answer.headers ?? {})) hash.update(name).update(value);
  return { ...answer, etag: `"${hash.update(answer.body).digest('base64url').slice(0, 27)}"` };
}

/** The coding the service would pick for the benchmark's Accept-Encoding values. */
function codingOf(accept: string | undefined): 'br' | 'gzip' | undefined {
  if (accept === undefined) return undefined;
  return accept.includes('br') ? 'br' : accept.includes('gzip') ? 'gzip' : undefined;
}

/**
 * The in-memory store: seeded pets on demand, created pets in id order, also per status, so a
 * filtered page past the seeded pets costs what the service's (status, id) index costs it, rather
 * than a scan of every pet created during the run.
 */
class Pets {
  private readonly seededCache = new Map<number, StoredPet>();
  private readonly created: StoredPet[] = [];
  private readonly createdByStatus = new Map<PetStatus | undefined, StoredPet[]>();
  private nextId: number;

  constructor(private readonly config: BaselineConfig) {
    this.nextId = config.seeded + config.firstId;
  }

  get(id: number): StoredPet | undefined {
    if (id >= 1 && id <= this.config.seeded) {
      let pet = this.seededCache.get(id);
      if (pet === undefined) {
        const sample = samplePet(id - 1);
        const json = toJson(id, sample.name, Number(sample.categoryId), sample.status);
        pet = { id, status: sample.status, json };
        this.seededCache.set(id, pet);
      }
      return pet;
    }
    const pet = this.created[this.firstCreatedAfter(id - 1)];
    return pet?.id === id ? pet : undefined;
  }

  /** Index of the first pet with an id above `afterId` in `pets`, which are in id order. */
  private firstCreatedAfter(afterId: number, pets: StoredPet[] = this.created): number {
    let [low, high] = [0, pets.length];
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((pets[middle] as StoredPet).id > afterId) high = middle;
      else low = middle + 1;
    }
    return low;
  }

  create(name: string, categoryId: number, status: PetStatus | undefined): StoredPet {
    const id = this.nextId;
    this.nextId += this.config.idStep;
    const pet = { id, status, json: toJson(id, name, categoryId, status) };
    this.created.push(pet);
    const same = this.createdByStatus.get(status);
    if (same === undefined) this.createdByStatus.set(status, [pet]);
    else same.push(pet);
    return pet;
  }

  /** Up to `limit` pets after `afterId` in id order, and whether more match (the service's limit + 1). */
  page(afterId: number, status: PetStatus | undefined, limit: number): StoredPet[] {
    const found: StoredPet[] = [];
    const matches = (pet: StoredPet | undefined): pet is StoredPet =>
      pet !== undefined && (status === undefined || pet.status === status);
    for (let id = afterId + 1; id <= this.config.seeded && found.length <= limit; id++) {
      const pet = this.get(id);
      if (matches(pet)) found.push(pet);
    }
    const created = status === undefined ? this.created : (this.createdByStatus.get(status) ?? []);
    for (let i = this.firstCreatedAfter(afterId, created); i < created.length; i++) {
      if (found.length > limit) break;
      found.push(created[i] as StoredPet);
    }
    return found;
  }
}

/** Fixed windows counted in memory, described as the service's rate-limit headers describe them. */
class Counters {
  private minute = { start: 0, used: 0 };
  private day = { start: 0, used: 0 };

  constructor(private readonly config: BaselineConfig) {}

  hit(now: number): Headers {
    const minuteStart = now - (now % MINUTE_MS);
    const dayStart = now - (now % DAY_MS);
    if (this.minute.start !== minuteStart) this.minute = { start: minuteStart, used: 0 };
    if (this.day.start !== dayStart) this.day = { start: dayStart, used: 0 };
    this.minute.used += 1;
    this.day.used += 1;
    const windows = [
      { name: 'minute', limit: this.config.perMinute, used: this.minute.used, start: minuteStart },
      { name: 'day', limit: this.config.perDay, used: this.day.used, start: dayStart },
    ].map((w, i) => ({
      ...w,
      remaining: Math.max(0, w.limit - w.used),
      resetAt: w.start + (i === 0 ? MINUTE_MS : DAY_MS),
      seconds: i === 0 ? 60 : 86_400,
    }));
    const [minute, day] = windows as [(typeof windows)[0], (typeof windows)[0]];
    const inForce = day.remaining <= minute.remaining ? day : minute;
    return {
      'x-ratelimit-limit': String(inForce.limit),
      'x-ratelimit-remaining': String(inForce.remaining),
      'x-ratelimit-reset': String(Math.ceil(inForce.resetAt / 1000)),
      'ratelimit-policy': windows.map((w) => `"${w.name}";q=${w.limit};w=${w.seconds}`).join(', '),
      ratelimit: windows
        .map((w) => `"${w.name}";r=${w.remaining};t=${Math.ceil((w.resetAt - now) / 1000)}`)
        .join(', '),
    };
  }
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

const problem = (status: number, code: string): Answer => ({
  status,
  body: JSON.stringify({ code, message: code }),
});

export function startBaseline(config: BaselineConfig): void {
  const pets = new Pets(config);
  const keys = [config.key];
  if (config.keysFile !== undefined) {
    keys.push(
      ...readFileSync(config.keysFile, 'utf8')
        .split('\n')
        .filter((k) => k !== ''),
    );
  }
  const countersByAuthorization = new Map(keys.map((k) => [`Bearer ${k}`, new Counters(config)]));
  const origin = `http://127.0.0.1:${config.port}`;
  const getPetHeaders = {
    deprecation: `@${Math.floor(GET_PET_DEPRECATED_AT / 1000)}`,
    sunset: GET_PET_SUNSET_HTTP_DATE,
    link: `<${origin}/v1/pets>; rel="successor-version"`,
  };

  function list(query: URLSearchParams): Answer {
    const limit = Number(query.get('limit') ?? PAGE_DEFAULT);
    const statusParam = query.get('status') ?? undefined;
    const status = isPetStatus(statusParam) ? statusParam : undefined;
    const cursor = query.get('cursor');
    let afterId = 0;
    if (cursor !== null) {
      try {
        afterId = decodeCursor(cursor, status);
      } catch {
        return problem(400, 'invalid_parameter');
      }
    }
    const found = pets.page(afterId, status, limit);
    const shown = found.slice(0, limit);
    const headers: Headers = {};
    const last = shown[shown.length - 1];
    if (found.length > limit && last !== undefined) {
      const next = new URLSearchParams({ limit: String(limit) });
      if (status) next.set('status', status);
      next.set('cursor', encodeCursor(last.id, status));
      headers.link = `<${origin}/v1/pets?${next}>; rel="next"`;
    }
    return tagged({ status: 200, body: `[${shown.map((pet) => pet.json).join(',')}]`, headers });
  }

  function get(idText: string): Answer {
    const pet = /^\d{1,16}$/.test(idText) ? pets.get(Number(idText)) : undefined;
    const answer = pet ? { status: 200, body: pet.json } : problem(404, 'not_found');
    return tagged({ ...answer, headers: getPetHeaders });
  }

  function create(text: string): Answer {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return problem(400, 'invalid_json');
    }
    const { name, categoryId, status } = (body ?? {}) as Record<string, unknown>;
    if (typeof name !== 'string' || typeof categoryId !== 'number') {
      return problem(400, 'invalid_body');
    }
    if (status !== undefined && !isPetStatus(status)) return problem(400, 'invalid_body');
    const pet = pets.create(name, categoryId, status);
    return { status: 201, body: pet.json, headers: { location: `/v1/pets/${pet.id}` } };
  }

  /**
   * Answers to GETs kept in memory by URL, the way the service keeps its bodies: a pet, and a full
   * page (the last page of a listing may still grow, so it is built each time).
   */
  const kept = new Map<string, Answer>();
  function remembered(url: string, build: () => Answer, keep: (answer: Answer) => boolean): Answer {
    const known = kept.get(url);
    if (known !== undefined) return known;
    const answer = build();
    if (keep(answer)) kept.set(url, answer);
    return answer;
  }

  async function route(request: IncomingMessage, path: string, query: string): Promise<Answer> {
    if (request.method === 'GET' && path === '/v1/pets') {
      return remembered(
        request.url ?? '',
        () => list(new URLSearchParams(query)),
        (answer) => answer.headers?.link !== undefined,
      );
    }
    if (request.method === 'POST' && path === '/v1/pets') return create(await readBody(request));
    if (request.method === 'GET' && path.startsWith('/v1/pets/')) {
      return remembered(
        path,
        () => get(path.slice(9)),
        (answer) => answer.status === 200,
      );
    }
    return problem(404, 'no_route');
  }

  async function answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = request.url ?? '/';
    const mark = url.indexOf('?');
    const path = mark === -1 ? url : url.slice(0, mark);
    const query = mark === -1 ? '' : url.slice(mark + 1);
    if (path === '/readyz' || path === '/healthz') {
      response.writeHead(200, { 'content-type': JSON_TYPE }).end('{"status":"ready"}');
      return;
    }
    const headers: Headers = { ...EVERY_ANSWER_HEADERS, 'x-request-id': randomUUID() };
    let result: Answer;
    const counters = countersByAuthorization.get(request.headers.authorization ?? '');
    if (counters === undefined) {
      result = problem(401, 'unauthorized');
    } else {
      Object.assign(headers, counters.hit(Date.now()));
      result = await route(request, path, query);
    }
    Object.assign(headers, result.headers);
    if (result.etag === undefined) {
      Object.assign(headers, {
        'content-type': JSON_TYPE,
        'content-length': String(Buffer.byteLength(result.body)),
      });
      response.writeHead(result.status, headers).end(result.body);
      return;
    }
    // listPets and getPet: revalidated, compressed once (as the service's cached answers are).
    headers['cache-control'] = REVALIDATED_CACHE_CONTROL;
    headers.vary = 'Accept-Encoding';
    const coding =
      Buffer.byteLength(result.body) >= 1024
        ? codingOf(request.headers['accept-encoding'])
        : undefined;
    const etag = coding === undefined ? result.etag : `${result.etag.slice(0, -1)}-${coding}"`;
    headers.etag = etag;
    if (request.headers['if-none-match'] === etag) {
      response.writeHead(304, headers).end();
      return;
    }
    let body: string | Buffer = result.body;
    if (coding !== undefined) {
      result.compressed ??= {};
      body = result.compressed[coding] ??=
        coding === 'br'
          ? brotliCompressSync(result.body, {
              params: { [constants.BROTLI_PARAM_QUALITY]: 5 },
            })
          : gzipSync(result.body);
      headers['content-encoding'] = coding;
    }
    headers['content-type'] = JSON_TYPE;
    headers['content-length'] = String(Buffer.byteLength(body));
    response.writeHead(200, headers).end(body);
  }

  const server = createServer((request, response) => {
    answer(request, response).catch((error: unknown) => {
      process.stderr.write(`baseline: ${String(error)}\n`);
      response.destroy();
    });
  });
  // The service's timeouts (src/http/apps/public/public-app.ts), so both announce the same keep-alive.
  server.keepAliveTimeout = 72_000;
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  server.listen(config.port, '127.0.0.1', () => process.stdout.write('baseline listening\n'));
  const stop = () => server.close(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

const raw = process.env.BENCH_BASELINE_CONFIG;
if (raw !== undefined) startBaseline(JSON.parse(raw) as BaselineConfig);

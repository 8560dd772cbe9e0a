import type { IncomingMessage, ServerResponse } from 'node:http';
import type {
  Admission,
  AdmissionService,
  Operation,
} from '../../domain/admission/admission-service.js';
import type { Clock } from '../../domain/clock.js';
import type { RateState } from '../../domain/rate-limits/rate-limiter.js';
import { isGetPetGone } from '../../domain/pets/deprecation.js';
import { INT64_MAX, isPetStatus, PAGE_SIZE, type PetStatus } from '../../domain/pets/pet.js';
import type { PetService } from '../../domain/pets/pet-service.js';
import type { KeptCopy, PageQuery, StoreCopies } from '../../domain/pets/store-copies.js';
import type { Metrics } from '../../telemetry/metrics.js';
import { credentialOf, decidedBefore } from '../apps/public/api-key-guard.js';
import type { AccessLog } from '../plugins/access-log.plugin.js';
import { requestIdFor } from '../plugins/request-id.plugin.js';
import { API_HEADERS } from '../plugins/security-headers.plugin.js';
import { RATE_LIMIT_VALUE_HEADERS, writeRateLimitValues } from '../answers/rate-limit-headers.js';
import { routeTemplateOf } from '../route-info.js';
import type { CounterCell, HistogramCell } from '../../telemetry/cell-metrics.js';
import { deprecationHeaders, GET_PET } from '../apps/public/pets/get-pet.route.js';
import { LIST_PETS, type PageAnswers } from '../apps/public/pets/list-pets.route.js';
import { JSON_TYPE } from '../answers/cached-answer.js';
import { apiPath } from '../scopes.js';

/** Node's request listener, as Fastify hands it to the server: what a request goes to next. */
export type RequestListener = (request: IncomingMessage, response: ServerResponse) => void;

/** Serves a request, or hands it to `next` (Fastify) untouched. */
export type ServeFirst = (
  request: IncomingMessage,
  response: ServerResponse,
  next: RequestListener,
) => void;

export interface KeptAnswersDependencies {
  admission: AdmissionService;
  copies: StoreCopies;
  /** Pages not kept are read here when the store reads synchronously (SQLite). */
  pets: PetService;
  /** How a page read here becomes the route's bytes. */
  pageAnswers: PageAnswers;
  metrics: Metrics;
  /** The access log; undefined when the log level writes no access line. */
  access: AccessLog | undefined;
  clock: Clock;
  publicBaseUrl: string;
}

/** One of the two routes, as this path answers it. */
interface KeptRoute {
  readonly operation: Operation;
  readonly operationId: string;
  /** As the access line names it (src/http/route-info.ts). */
  readonly template: string;
  /** Its answers' headers, by whether a Link goes with the copy (a page with a next one). */
  readonly layouts: { readonly plain: HeaderLayout; readonly linked: HeaderLayout };
  readonly answered: CounterCell;
  readonly timer: HistogramCell;
  readonly deprecatedByPlan: Map<string, CounterCell>;
}

/** What a request reads, when it is one this path may answer. */
type Read =
  | { route: KeptRoute; kind: 'page'; query: PageQuery }
  | { route: KeptRoute; kind: 'pet'; id: string };

/** Content-Length of each kept copy, measured once (the copies never change while kept). */
const lengths = new WeakMap<KeptCopy, string>();

function contentLength(copy: KeptCopy): string {
  let length = lengths.get(copy);
  if (length === undefined) {
    length = String(Buffer.byteLength(copy.body));
    lengths.set(copy, length);
  }
  return length;
}

/**
 * The headers of an answer as writeHead takes them (name, value, name, value...), in the routes'
 * order: the names and fixed values laid out once, the values of each answer filled in.
 */
class HeaderLayout {
  readonly #template: string[];
  readonly #requestIdAt: number;
  readonly #rateLimitsAt: number;
  readonly #linkAt: number;
  readonly #lengthAt: number;

  constructor(closing: readonly string[], linked: boolean) {
    const template = ['x-request-id', '', ...pairs(API_HEADERS)];
    this.#requestIdAt = 1;
    this.#rateLimitsAt = template.length + 1;
    for (const name of RATE_LIMIT_VALUE_HEADERS) template.push(name, '');
    this.#linkAt = linked ? template.push('link', '') - 1 : -1;
    template.push(...closing, 'content-length', '');
    this.#lengthAt = template.length - 1;
    this.#template = template;
  }

  fill(requestId: string, rate: RateState, link: string | undefined, length: string): string[] {
    const headers = this.#template.slice();
    headers[this.#requestIdAt] = requestId;
    writeRateLimitValues(rate, headers, this.#rateLimitsAt, 2);
    if (this.#linkAt >= 0) headers[this.#linkAt] = link ?? '';
    headers[this.#lengthAt] = length;
    return headers;
  }
}

const pairs = (headers: Readonly<Record<string, string>>): string[] =>
  Object.entries(headers).flat();

/**
 * The two reads clients repeat most, listPets and getPet, answered from the copies that
 * StoreCopies keeps (the same bytes the routes send) without going through Fastify: its request
 * and reply objects, logger, routing, hooks and header handling cost more than twice what Node
 * itself spends on such an answer (`npm run bench`, finding 15). On a store that reads synchronously
 * (SQLite) a page not kept is read here too, as the route reads it (finding 18). Only what is certain
 * to end in a 200 is answered here, with the headers, access line and metrics the routes give it;
 * anything else (another path, method or parameter, a query that is not plain, a key not seen valid
 * lately, a pet not kept, a bad cursor, a store error, a refusal) goes to Fastify as it came. A refusal decided
 * here is handed on with its decision, so that it is not counted twice.
 * test/http/kept-answers.test.ts holds the answers of both paths side by side.
 */
export function keptAnswers(deps: KeptAnswersDependencies): ServeFirst {
  const { admission, copies, pets, pageAnswers, metrics, access, clock } = deps;
  const listPath = apiPath(LIST_PETS.path);
  const petPrefix = `${listPath}/`;
  const route = (
    { operationId, path }: { operationId: string; path: string },
    deprecated: boolean,
    closing: readonly string[],
  ): KeptRoute => ({
    operation: { access: 'api_key', deprecated },
    operationId,
    template: routeTemplateOf(apiPath(path)),
    layouts: { plain: new HeaderLayout(closing, false), linked: new HeaderLayout(closing, true) },
    answered: metrics.requests.cell(operationId, 'GET', '200'),
    timer: metrics.duration.cell(operationId),
    deprecatedByPlan: new Map(),
  });
  const routes = {
    page: route(LIST_PETS, false, ['content-type', JSON_TYPE]),
    pet: route(GET_PET, true, [
      'content-type',
      JSON_TYPE,
      ...pairs(deprecationHeaders(deps.publicBaseUrl)),
    ]),
  };

  function readOf(request: IncomingMessage, response: ServerResponse): Read | undefined {
    if (request.method !== 'GET') return undefined;
    // Draining (Connection: close), a missing Host, a body: Fastify's to answer.
    if (response.hasHeader('connection')) return undefined;
    const { headers } = request;
    if (request.httpVersion === '1.1' && headers.host === undefined) return undefined;
    if (headers['content-length'] !== undefined || headers['transfer-encoding'] !== undefined) {
      return undefined;
    }
    const url = request.url ?? '';
    if (url === listPath)
      return { route: routes.page, kind: 'page', query: { limit: PAGE_SIZE.default } };
    if (url.startsWith(listPath) && url.charAt(listPath.length) === '?') {
      const query = plainQuery(url.slice(listPath.length + 1));
      return query && { route: routes.page, kind: 'page', query };
    }
    if (url.startsWith(petPrefix)) {
      const id = plainId(url.slice(petPrefix.length));
      if (id === undefined || isGetPetGone(clock.now())) return undefined;
      return { route: routes.pet, kind: 'pet', id };
    }
    return undefined;
  }

  /** The deprecated-calls series of a route by plan, looked up once. */
  const deprecatedCell = (kept: KeptRoute, plan: string): CounterCell => {
    let cell = kept.deprecatedByPlan.get(plan);
    if (cell === undefined) {
      cell = metrics.deprecatedCalls.cell(kept.operationId, plan);
      kept.deprecatedByPlan.set(plan, cell);
    }
    return cell;
  };

  /** Whether pages not kept can be read here now: on SQLite, once the route answered a page. */
  const readsPages = (): boolean => pets.listsNow && pageAnswers.ready;

  /** Whether the read may end in a 200 here: a kept copy, or a page this path can read. */
  const answerable = (read: Read): boolean =>
    read.kind === 'page'
      ? readsPages() || copies.keptPage(read.query) !== undefined
      : copies.keptPet(read.id) !== undefined;

  /** Set by copyFor when the copy it gave was read just now rather than kept. */
  let readHere = false;

  /** The copy to answer with; a page not kept is read now (and kept when final). */
  const copyFor = (read: Read): KeptCopy | undefined => {
    readHere = false;
    if (read.kind === 'pet') return copies.keptPet(read.id);
    const { query } = read;
    if (!readsPages()) return copies.keptPage(query);
    return copies.pageNow(query, () => {
      readHere = true;
      const page = pets.listNow(query);
      if (page === undefined) return undefined;
      const copy = pageAnswers.answerNow(query, page);
      return copy && { copy, final: page.final };
    });
  };

  function answer(
    request: IncomingMessage,
    response: ServerResponse,
    read: Read,
    decision: Admission,
    startedAt: number,
  ): boolean {
    const copy = decision.admitted ? copyFor(read) : undefined;
    if (copy === undefined) return false;
    const requestId = requestIdFor(request);
    const { route: kept } = read;
    const layout = copy.link === undefined ? kept.layouts.plain : kept.layouts.linked;
    // A page read just now is answered once: its length is not kept.
    const length = readHere ? String(Buffer.byteLength(copy.body)) : contentLength(copy);
    const headers = layout.fill(requestId, decision.rate, copy.link, length);
    response.writeHead(200, headers);
    response.end(copy.body);
    const seconds = (performance.now() - startedAt) / 1000;
    kept.answered.value += 1;
    metrics.duration.observe(kept.timer, seconds);
    if (kept.operation.deprecated === true && decision.key !== undefined) {
      deprecatedCell(kept, decision.key.plan).value += 1;
    }
    access?.write(requestId, {
      method: 'GET',
      route: kept.template,
      status: 200,
      durationMs: Math.round(seconds * 10_000) / 10,
      keyId: decision.key?.id,
    });
    return true;
  }

  return (request, response, next) => {
    const read = readOf(request, response);
    if (read === undefined) return next(request, response);
    const credential = credentialOf(request);
    if (credential.kind !== 'bearer' || !answerable(read)) return next(request, response);
    const startedAt = performance.now();
    let decision: ReturnType<AdmissionService['admitCached']>;
    try {
      decision = admission.admitCached(credential.token, read.route.operation);
    } catch {
      // Nothing was counted: Fastify's guard asks again and answers the outage.
      return next(request, response);
    }
    if (decision === undefined) return next(request, response);
    const finish = (made: Admission) => {
      let done = false;
      try {
        done = answer(request, response, read, made, startedAt);
      } catch {
        done = response.headersSent;
      }
      if (!done) {
        decidedBefore(request, made);
        next(request, response);
      }
    };
    if (decision instanceof Promise) {
      decision.then(finish, () => next(request, response));
    } else {
      finish(decision);
    }
  };
}

/**
 * limit, status and cursor, each at most once, in their plain form; else undefined. Never a query
 * the route would refuse or read otherwise (test/http/kept-answers.property.test.ts).
 */
export function plainQuery(text: string): PageQuery | undefined {
  const query: { limit?: number; status?: PetStatus; cursor?: string } = {};
  if (text !== '') {
    for (const part of text.split('&')) {
      const equals = part.indexOf('=');
      const name = part.slice(0, equals);
      const value = part.slice(equals + 1);
      if (equals < 0 || name in query) return undefined;
      if (name === 'limit' && /^[1-9][0-9]{0,2}$/.test(value) && Number(value) <= PAGE_SIZE.max) {
        query.limit = Number(value);
      } else if (name === 'status' && isPetStatus(value)) {
        query.status = value;
      } else if (name === 'cursor' && /^[A-Za-z0-9_-]{1,200}$/.test(value)) {
        query.cursor = value;
      } else {
        return undefined;
      }
    }
  }
  return { ...query, limit: query.limit ?? PAGE_SIZE.default };
}

/**
 * A pet id in its plain form (no sign, no leading zero) within int64, as that text; else
 * undefined. Only the 19-digit ids need a BigInt to tell.
 */
export function plainId(text: string): string | undefined {
  if (!/^[1-9][0-9]{0,18}$/.test(text)) return undefined;
  return text.length < 19 || BigInt(text) <= INT64_MAX ? text : undefined;
}

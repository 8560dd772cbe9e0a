import type { IncomingMessage, ServerResponse } from 'node:http';
import type {
  Admission,
  AdmissionService,
  Operation,
} from '../../domain/admission/admission-service.js';
import type { StoreCache } from '../../domain/cache/store-cache.js';
import type { Clock } from '../../domain/clock.js';
import { requiredScopeOf } from '../../domain/api-keys/scopes.js';
import { isGetPetGone } from '../../domain/pets/deprecation.js';
import { PAGE_SIZE } from '../../domain/pets/pet.js';
import type { PageQuery, PetService } from '../../domain/pets/pet-service.js';
import type { AnswerRecorder } from '../answers/answer-recorder.js';
import type { CachedAnswer, Sent } from '../answers/cached-answer.js';
import { answerFor as sentFor } from '../answers/conditional-answer.js';
import { GET_PET, LIST_PETS, type PetAnswers, type PetOperation } from '../answers/pet-answers.js';
import { RATE_LIMIT_VALUE_HEADERS, writeRateLimitValues } from '../answers/rate-limit-headers.js';
import { requestIdFor } from '../answers/request-id.js';
import { answerPairs, revalidatedHeadersFor } from '../answers/response-headers.js';
import { credentialOf, handOverAdmission } from '../apps/public/api-key-guard.js';
import { routeTemplateOf } from '../route-info.js';
import { apiPath } from '../scopes.js';
import { framingRefusal } from '../request-framing.js';
import { knownPlainQuery, plainId } from './plain-request.js';

/** Node's request listener, as Fastify hands it to the server: what a request goes to next. */
export type RequestListener = (request: IncomingMessage, response: ServerResponse) => void;

/** Serves a request, or hands it to `next` (Fastify) untouched. */
export type ServeFirst = (
  request: IncomingMessage,
  response: ServerResponse,
  next: RequestListener,
) => void;

export interface FastPathDependencies {
  admission: AdmissionService;
  cache: StoreCache<CachedAnswer>;
  /** Pages not cached are read here when the store reads synchronously (SQLite). */
  pets: PetService;
  /** The one definition of the two answers, shared with the routes. */
  answers: PetAnswers;
  /** What is logged and counted of an answer, shared with the routes. */
  recorder: AnswerRecorder;
  clock: Clock;
  /** The headers of every answer of the listener (answers/response-headers.ts). */
  answerHeaders: Readonly<Record<string, string>>;
  /** CORS is on: @fastify/cors decides on requests with an Origin header. */
  cors: boolean;
}

/** One of the two operations, as this path answers it. */
interface FastRoute {
  readonly operation: PetOperation;
  readonly admission: Operation;
  /** As the access line and the span name it. */
  readonly template: string;
}

/** What a request reads, when it is one this path may answer. */
type Read =
  | { route: FastRoute; kind: 'page'; query: PageQuery }
  | { route: FastRoute; kind: 'pet'; id: string };

/** The query of `GET /v1/pets` without one, shared by those requests. */
const DEFAULT_QUERY: PageQuery = Object.freeze({ limit: PAGE_SIZE.default });

const route = (operation: PetOperation): FastRoute => ({
  operation,
  admission: {
    access: 'api_key',
    deprecated: operation.deprecated,
    scope: requiredScopeOf(operation.operationId),
  },
  template: routeTemplateOf(apiPath(operation.path)),
});

/**
 * The fast path: listPets and getPet, the two reads clients repeat most, answered in front of
 * Fastify when the answer is certain to be a 200 at hand (cached, or read at once from SQLite).
 * Fastify's request and reply objects, routing and hooks cost more than twice what Node itself
 * spends on such an answer (`npm run bench`); this path does what those hooks do by calling the
 * same code: the answer from PetAnswers, the headers of every answer from their one table, the
 * admission from AdmissionService, the record from AnswerRecorder. Each hook of the two routes is
 * declared in fast-path-rules.ts as either done here the same way or a reason to leave; a hook
 * not declared there stops the app from starting. Anything else goes to Fastify as it came; a
 * refusal decided here is handed over with its decision, so that it is counted once.
 */
export function createFastPath(deps: FastPathDependencies): ServeFirst {
  const { admission, cache, pets, answers, recorder, clock, cors } = deps;
  // Laid out once; each answer copies it and fills in its request id. Both operations' answers may
  // be revalidated and vary by coding.
  const everyAnswer = answerPairs('', revalidatedHeadersFor(deps.answerHeaders));
  const rateLimitsAt = everyAnswer.length;
  /**
   * The headers of each representation sent (a cached answer's identity 200, a 304, a compressed
   * 200), laid out once as writeHead takes them: the headers of every answer, the rate-limit
   * headers' names with their values left blank, then the representation's own. Each request
   * copies its layout and fills in its request id and rate-limit values. By the Sent object, which
   * never changes and goes with its answer.
   */
  const layouts = new WeakMap<Sent, readonly string[]>();
  const layoutOf = (sent: Sent): readonly string[] => {
    let layout = layouts.get(sent);
    if (layout === undefined) {
      const made = everyAnswer.slice();
      for (const name of RATE_LIMIT_VALUE_HEADERS) made.push(name, '');
      for (const part of sent.headers) made.push(part);
      layout = made;
      layouts.set(sent, layout);
    }
    return layout;
  };
  const listPath = apiPath(LIST_PETS.path);
  const petPrefix = `${listPath}/`;
  const routes = { page: route(LIST_PETS), pet: route(GET_PET) };

  function readOf(request: IncomingMessage, response: ServerResponse): Read | undefined {
    if (request.method !== 'GET') return undefined;
    // Draining (Connection: close), a body, a CORS request: Fastify's to answer.
    if (response.hasHeader('connection')) return undefined;
    const { headers } = request;
    if (headers['content-length'] !== undefined || headers['transfer-encoding'] !== undefined) {
      return undefined;
    }
    // No Host or two, HTTP/0.9, a target not a path: refused by Fastify's refuseBadFraming.
    if (framingRefusal(request) !== undefined) return undefined;
    if (cors && headers.origin !== undefined) return undefined;
    const url = request.url ?? '';
    if (url === listPath) return { route: routes.page, kind: 'page', query: DEFAULT_QUERY };
    if (url.startsWith(listPath) && url.charAt(listPath.length) === '?') {
      const query = knownPlainQuery(url.slice(listPath.length + 1));
      return query && { route: routes.page, kind: 'page', query };
    }
    if (url.startsWith(petPrefix)) {
      const id = plainId(url.slice(petPrefix.length));
      if (id === undefined || isGetPetGone(clock.now())) return undefined;
      return { route: routes.pet, kind: 'pet', id };
    }
    return undefined;
  }

  /** Whether the read may end in a 200 here: a cached answer, or a page read at once. */
  const answerable = (read: Read): boolean =>
    read.kind === 'page'
      ? pets.listsNow || cache.cachedPage(read.query) !== undefined
      : cache.cachedPet(read.id) !== undefined;

  /** The answer: cached, or a page read now (and cached when final); undefined leaves. */
  const answerFor = (read: Read): CachedAnswer | undefined => {
    if (read.kind === 'pet') return cache.cachedPet(read.id);
    const { query } = read;
    if (!pets.listsNow) return cache.cachedPage(query);
    return cache.pageSync(query, () => {
      const page = pets.listNow(query);
      return page && { value: answers.page(query, page), final: page.final };
    });
  };

  function answer(
    request: IncomingMessage,
    response: ServerResponse,
    read: Read,
    decision: Admission,
    startedAt: number,
  ): boolean {
    const found = decision.admitted ? answerFor(read) : undefined;
    if (found === undefined) return false;
    const requestId = requestIdFor(request);
    const write = (sent: Sent) => {
      const headers = layoutOf(sent).slice();
      headers[1] = requestId;
      writeRateLimitValues(decision.rate, headers, rateLimitsAt + 1);
      response.writeHead(sent.status, headers);
      if (sent.latin1 === undefined) response.end(sent.body);
      else response.end(sent.latin1, 'latin1');
      recorder.answered(request, {
        requestId,
        method: 'GET',
        operation: read.route.operation.operationId,
        route: read.route.template,
        url: request.url ?? '',
        status: sent.status,
        seconds: (performance.now() - startedAt) / 1000,
        key: decision.key,
        deprecated: read.route.operation.deprecated,
      });
    };
    const sent = sentFor(found, request.headers);
    // A compressed representation still being made: this path answers once it is.
    if (sent instanceof Promise) {
      sent.then(write).catch(() => response.destroy());
    } else {
      write(sent);
    }
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
      decision = admission.admitCached(credential.token, read.route.admission);
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
        handOverAdmission(request, made);
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

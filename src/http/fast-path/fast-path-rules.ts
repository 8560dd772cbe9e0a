import type { FastifyInstance } from 'fastify';
import { GET_PET, LIST_PETS } from '../answers/pet-answers.js';
import { apiPath } from '../scopes.js';

/**
 * Every per-request rule (a Fastify hook) of the two routes the fast path answers in front of
 * Fastify, by the hook function's name, and how the fast path keeps it: `same` (it runs the same
 * code, or writes what the hook writes from the same definition) or `leaves` (a request the rule
 * could act on is handed to Fastify). A hook on those routes that is not declared here stops the
 * public app from starting (checkFastPathRules), so a new rule cannot be skipped silently on the
 * two busiest reads: declare it here, with the fast path's side of it.
 */
export const FAST_PATH_RULES: Readonly<
  Record<string, { readonly fastPath: 'same' | 'leaves'; readonly how: string }>
> = {
  answerHeaders: {
    fastPath: 'same',
    how: 'writes the request id and the table of every answer (answers/response-headers.ts)',
  },
  recordAnswer: {
    fastPath: 'same',
    how: 'tells the same AnswerRecorder: access line, metrics, span',
  },
  logArrival: {
    fastPath: 'leaves',
    how: 'at debug the fast path is off: the arrival line names request.ip, which Fastify works out',
  },
  refuseBadFraming: {
    fastPath: 'leaves',
    how: 'a request request-framing.ts refuses (no Host or two, a target not a path, HTTP/0.9, a Transfer-Encoding) goes to Fastify',
  },
  handleCors: {
    fastPath: 'leaves',
    how: 'with CORS on, a request with Origin goes to Fastify; what @fastify/cors writes on every other answer is in the table of every answer (CORS_ANSWER_HEADERS)',
  },
  refuseUnrouted: {
    fastPath: 'leaves',
    how: 'the fast path answers only the two paths, read exactly (plain-request.ts)',
  },
  admitRequest: {
    fastPath: 'same',
    how: 'AdmissionService.admitCached; a refusal is handed over to this hook with its decision',
  },
  markDeprecated: {
    fastPath: 'same',
    how: "getPet's 200 (PetAnswers.pet) carries the same deprecationHeaders",
  },
  refuseAfterSunset: {
    fastPath: 'leaves',
    how: 'from the sunset on, getPet goes to Fastify',
  },
};

/** The hooks of each GET route as Fastify prints them: `/v1/pets` -> ['onRequest:answerHeaders', ...]. */
export function getRouteHooks(app: FastifyInstance): Map<string, string[]> {
  const routes = new Map<string, string[]>();
  const stack: Array<{ column: number; path: string }> = [];
  let current: string[] | undefined;
  for (const line of app.printRoutes({ includeHooks: true, method: 'GET' }).split('\n')) {
    const column = line.search(/[^│├└─ ]/);
    if (column < 0) continue;
    const content = line.slice(column);
    const hook = /^• \((\w+)\) (\[.*\])$/.exec(content);
    if (hook) {
      const names = JSON.parse(hook[2] as string) as string[];
      for (const name of names) current?.push(`${hook[1]}:${name.replace(/\(\)$/, '')}`);
      continue;
    }
    while (stack.length > 0 && (stack[stack.length - 1]?.column ?? 0) >= column) stack.pop();
    const node = /^(.*?)(?: \(([A-Z, ]+)\))?$/.exec(content);
    const path = (stack[stack.length - 1]?.path ?? '') + (node?.[1] ?? '');
    stack.push({ column, path });
    current = node?.[2] === undefined ? undefined : [];
    if (current) routes.set(path, current);
  }
  return routes;
}

/** The hooks of the fast path's routes that FAST_PATH_RULES does not declare, as `hook:name`. */
export function undeclaredRules(app: FastifyInstance): string[] {
  const routes = getRouteHooks(app);
  const undeclared: string[] = [];
  for (const path of [apiPath(LIST_PETS.path), apiPath(GET_PET.path)]) {
    const hooks = routes.get(path);
    if (hooks === undefined) throw new Error(`the fast path's route GET ${path} is not registered`);
    for (const hook of hooks) {
      const name = hook.slice(hook.indexOf(':') + 1);
      if (!(name in FAST_PATH_RULES)) undeclared.push(`${path} ${hook}`);
    }
  }
  return undeclared;
}

/** An onReady hook: refuses to start when a rule of the fast path's routes is not declared. */
export function checkFastPathRules(app: FastifyInstance): () => Promise<void> {
  return async function checkFastPathRules() {
    const undeclared = undeclaredRules(app);
    if (undeclared.length > 0) {
      throw new Error(
        `hooks on the fast path's routes that src/http/fast-path/fast-path-rules.ts does not declare (same or leaves): ${undeclared.join(', ')}`,
      );
    }
  };
}

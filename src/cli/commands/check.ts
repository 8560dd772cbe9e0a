import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { BUILD_VERSION, GENERATED_OPENAPI_FILE } from '../../build-info.js';
import type { KeyEnvironment } from '../../domain/api-keys/api-key.js';
import { API_KEY_PATTERN, generateApiKey } from '../../domain/api-keys/key-format.js';
import { GET_PET_DEPRECATED_AT, GET_PET_SUNSET_HTTP_DATE } from '../../domain/pets/deprecation.js';
import { INT64_MAX, isPetStatus } from '../../domain/pets/pet.js';
import {
  CommandError,
  type Output,
  parseCommandArgs,
  type RemoteCommand,
  UsageError,
} from '../command.js';

/** The interface version the contract names (info.version of the document). */
const INTERFACE_VERSION = '1.0.0';
/** Per request: a deployment slower than this to answer one small request is not healthy. */
const REQUEST_TIMEOUT_MS = 10_000;
/** A differing document is reported by its first few differences, not all of them. */
const MAX_DIFFERENCES = 3;

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed body, or undefined when it is not JSON. */
  json: unknown;
}

interface Finding {
  ok: boolean;
  /** What came back, in a few words. */
  got: string;
}

interface Pet {
  id: number;
  name: string;
  categoryId: number;
  status?: string;
}

/** Where the checks send their requests: `root` is the base without /v1 (where /healthz is). */
interface Target {
  root: string;
  v1: string;
}

function target(raw: string): Target {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`<base-url> must be an http or https URL (got ${JSON.stringify(raw)})`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`<base-url> must be an http or https URL (got ${JSON.stringify(raw)})`);
  }
  // The interface's base address ends in /v1; an operator may as well give the host alone.
  const root = (url.origin + url.pathname).replace(/\/+$/, '').replace(/\/v1$/, '');
  return { root, v1: `${root}/v1` };
}

function describeFailure(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error.name === 'TimeoutError') return `no answer within ${REQUEST_TIMEOUT_MS / 1000} s`;
  const cause: unknown = error.cause;
  if (cause instanceof Error) {
    const code = 'code' in cause && typeof cause.code === 'string' ? `${cause.code}: ` : '';
    return `no answer (${code}${cause.message})`;
  }
  return `no answer (${error.message})`;
}

async function send(url: string, init: RequestInit = {}): Promise<Answer> {
  const res = await fetch(url, {
    ...init,
    redirect: 'manual',
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isPet(value: unknown): value is Pet {
  if (!isRecord(value)) return false;
  const { id, name, categoryId, status, ...rest } = value;
  return (
    Number.isInteger(id) &&
    typeof name === 'string' &&
    Number.isInteger(categoryId) &&
    (status === undefined || isPetStatus(status)) &&
    Object.keys(rest).length === 0
  );
}

/** True for exactly {code, message, status} with the status of the response and this code. */
function isErrorBody(answer: Answer, code: string): boolean {
  const body = answer.json;
  if (!isRecord(body)) return false;
  return (
    Object.keys(body).sort().join() === 'code,message,status' &&
    body.code === code &&
    typeof body.message === 'string' &&
    body.status === answer.status
  );
}

function shortBody(answer: Answer): string {
  const body = answer.json;
  if (isRecord(body) && typeof body.code === 'string') return `${answer.status} ${body.code}`;
  const text = answer.text.replace(/\s+/g, ' ');
  return `${answer.status} ${text.length > 60 ? `${text.slice(0, 60)}…` : text || '(empty)'}`;
}

function header(answer: Answer, name: string): string {
  return `${name}: ${answer.headers.get(name) ?? '(none)'}`;
}

function refusal(answer: Answer, challenge: string): Finding {
  const www = answer.headers.get('www-authenticate') ?? '';
  return {
    ok: answer.status === 401 && isErrorBody(answer, 'unauthorized') && www.startsWith(challenge),
    got: `${shortBody(answer)}${isErrorBody(answer, 'unauthorized') ? '' : ' (not the Error body)'}, ${header(answer, 'WWW-Authenticate')}`,
  };
}

const RATE_LIMIT_INTEGERS = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'];

function rateLimitHeaders(answer: Answer): Finding {
  const missing = RATE_LIMIT_INTEGERS.filter(
    (name) => !/^\d+$/.test(answer.headers.get(name) ?? ''),
  );
  // The IETF draft form: a policy per window with its quota, and what remains of each.
  if (!/"minute";q=\d+;w=60/.test(answer.headers.get('RateLimit-Policy') ?? '')) {
    missing.push('RateLimit-Policy');
  }
  if (!/"[a-z]+";r=\d+;t=\d+/.test(answer.headers.get('RateLimit') ?? ''))
    missing.push('RateLimit');
  const shown = [...RATE_LIMIT_INTEGERS, 'RateLimit-Policy', 'RateLimit'].map((n) =>
    header(answer, n),
  );
  return {
    ok: missing.length === 0,
    got:
      missing.length === 0
        ? shown.join(', ')
        : `missing or malformed: ${missing.join(', ')} (${shown.join(', ')})`,
  };
}

const DEPRECATION = `@${Math.floor(GET_PET_DEPRECATED_AT / 1000)}`;
const SUCCESSOR = /^<[^>]*\/v1\/pets>; rel="successor-version"$/;

function deprecationHeaders(answer: Answer): string[] {
  const wrong: string[] = [];
  if (answer.headers.get('Deprecation') !== DEPRECATION) wrong.push('Deprecation');
  if (answer.headers.get('Sunset') !== GET_PET_SUNSET_HTTP_DATE) wrong.push('Sunset');
  if (!SUCCESSOR.test(answer.headers.get('Link') ?? '')) wrong.push('Link');
  return wrong;
}

function showDeprecation(answer: Answer): string {
  return ['Deprecation', 'Sunset', 'Link'].map((n) => header(answer, n)).join(', ');
}

function pathOf(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  if (!/^[A-Za-z_$][\w$]*$/.test(key)) return `${path}[${JSON.stringify(key)}]`;
  return path === '' ? key : `${path}.${key}`;
}

/** Where two JSON values differ, as paths like `paths["/pets"].get.summary`; at most `max`. */
export function jsonDifferences(a: unknown, b: unknown, path = '', out: string[] = []): string[] {
  if (out.length > MAX_DIFFERENCES) return out;
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length)
      out.push(`${path || '(root)'} (${a.length} items, ${b.length} expected)`);
    else a.forEach((item, i) => jsonDifferences(item, b[i], pathOf(path, i), out));
  } else if (isRecord(a) && isRecord(b)) {
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (!(key in a)) out.push(`${pathOf(path, key)} (not in the deployment's)`);
      else if (!(key in b)) out.push(`${pathOf(path, key)} (not in this build's)`);
      else jsonDifferences(a[key], b[key], pathOf(path, key), out);
    }
  } else if (a !== b) {
    out.push(path || '(root)');
  }
  return out;
}

function withoutServers(document: unknown): unknown {
  if (!isRecord(document)) return document;
  const copy = { ...document };
  delete copy.servers;
  return copy;
}

function generatedDocument(): unknown {
  return JSON.parse(readFileSync(GENERATED_OPENAPI_FILE, 'utf8'));
}

/** The environment whose keys the deployment takes, read from the key given. */
function keyEnvironment(key: string): KeyEnvironment {
  return key.startsWith('pa_test_') ? 'staging' : 'production';
}

interface Options {
  target: Target;
  key: string;
  allowWrites: boolean;
}

/**
 * Runs the checks in order, writing one line as each ends; resolves with the names of those that
 * failed. Later checks use what earlier ones saw (the listed or created pet, the list's headers).
 */
async function runChecks(
  options: Options,
  out: Output,
): Promise<{ failed: string[]; total: number }> {
  const { target: base, key } = options;
  const auth = { authorization: `Bearer ${key}` };
  const failed: string[] = [];
  let total = 0;

  const check = async (name: string, expected: string, run: () => Promise<Finding>) => {
    total += 1;
    let finding: Finding;
    try {
      finding = await run();
    } catch (error) {
      finding = { ok: false, got: describeFailure(error) };
    }
    if (finding.ok) {
      out.write(`PASS  ${name}: ${finding.got}\n`);
    } else {
      failed.push(name);
      out.write(`FAIL  ${name}: expected ${expected}; got ${finding.got}\n`);
    }
  };
  const skip = (name: string, why: string) => out.write(`SKIP  ${name}: ${why}\n`);

  await check(
    'no key',
    '401 unauthorized with the Error body and WWW-Authenticate: Bearer realm="pets"',
    async () => refusal(await send(`${base.v1}/pets`), 'Bearer realm="pets"'),
  );
  await check(
    'bad key',
    '401 unauthorized with the Error body and WWW-Authenticate: Bearer realm="pets", error="invalid_token"',
    async () => {
      // Well formed, with a valid checksum, and unknown: the deployment has to look it up.
      const unknown = generateApiKey(keyEnvironment(key));
      const answer = await send(`${base.v1}/pets`, {
        headers: { authorization: `Bearer ${unknown}` },
      });
      return refusal(answer, 'Bearer realm="pets", error="invalid_token"');
    },
  );

  let list: Answer | undefined;
  await check('listPets', '200 with a JSON array of pets', async () => {
    list = await send(`${base.v1}/pets?limit=5`, { headers: auth });
    const pets = list.json;
    const ok = list.status === 200 && Array.isArray(pets) && pets.every(isPet);
    return {
      ok,
      got: ok && Array.isArray(pets) ? `200 with ${pets.length} pet(s)` : shortBody(list),
    };
  });
  await check(
    'rate-limit headers',
    'X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset (integers), RateLimit-Policy and RateLimit on listPets',
    async () =>
      list === undefined ? { ok: false, got: 'no answer from listPets' } : rateLimitHeaders(list),
  );

  let known: { pet: Pet; from: string } | undefined;
  if (Array.isArray(list?.json) && isPet(list.json[0]))
    known = { pet: list.json[0], from: 'listed' };

  if (options.allowWrites) {
    await check('createPet', '201 with the Pet sent and Location: /v1/pets/{id}', async () => {
      const sent = { name: `petstore check ${new Date().toISOString()}`, categoryId: 1 };
      const answer = await send(`${base.v1}/pets`, {
        method: 'POST',
        headers: {
          ...auth,
          'content-type': 'application/json',
          // A retry by hand of the same run would not make a second pet.
          'idempotency-key': `petstore-check-${randomUUID()}`,
        },
        body: JSON.stringify(sent),
      });
      const pet = answer.json;
      const location = answer.headers.get('Location') ?? '';
      const ok =
        answer.status === 201 &&
        isPet(pet) &&
        pet.name === sent.name &&
        pet.categoryId === sent.categoryId &&
        location.endsWith(`/v1/pets/${pet.id}`);
      if (ok) known = { pet, from: 'created' };
      const body = ok ? `201 with pet ${pet.id}` : shortBody(answer);
      return { ok, got: `${body}, Location: ${location || '(none)'}` };
    });
  } else {
    skip('createPet', 'not run; pass --allow-writes to create one pet (it stays in the store)');
  }

  if (known === undefined) {
    skip('getPet', 'no pet to read (none listed; --allow-writes creates one)');
  } else {
    const { pet, from } = known;
    await check(
      'getPet',
      `200 with the ${from} pet ${pet.id}, Deprecation: ${DEPRECATION}, Sunset: ${GET_PET_SUNSET_HTTP_DATE}, Link: <…/v1/pets>; rel="successor-version"`,
      async () => {
        const answer = await send(`${base.v1}/pets/${pet.id}`, { headers: auth });
        const same = answer.status === 200 && jsonDifferences(answer.json, pet).length === 0;
        const wrong = deprecationHeaders(answer);
        return {
          ok: same && wrong.length === 0,
          got: `${same ? `200 with the ${from} pet` : shortBody(answer)}, ${showDeprecation(answer)}`,
        };
      },
    );
  }
  await check(
    'getPet unknown id',
    '404 not_found with the Error body and the same Deprecation, Sunset and Link',
    async () => {
      // Ids stay below 2^53, so the largest id the interface allows is never a pet.
      const answer = await send(`${base.v1}/pets/${INT64_MAX}`, { headers: auth });
      const ok = answer.status === 404 && isErrorBody(answer, 'not_found');
      return {
        ok: ok && deprecationHeaders(answer).length === 0,
        got: `${shortBody(answer)}, ${showDeprecation(answer)}`,
      };
    },
  );

  let served: unknown;
  await check(
    'OpenAPI document',
    `GET /v1/openapi.json equal to this build's (${BUILD_VERSION}), servers aside`,
    async () => {
      let expected: unknown;
      try {
        expected = withoutServers(generatedDocument());
      } catch (error) {
        const why = error instanceof Error ? error.message : String(error);
        return {
          ok: false,
          got: `no document of this build to compare with (${why}; run npm run build)`,
        };
      }
      const answer = await send(`${base.v1}/openapi.json`);
      if (answer.status !== 200 || answer.json === undefined)
        return { ok: false, got: shortBody(answer) };
      served = answer.json;
      const differences = jsonDifferences(withoutServers(served), expected);
      const shown = differences.slice(0, MAX_DIFFERENCES).join(', ');
      const more = differences.length > MAX_DIFFERENCES ? ' and more' : '';
      return {
        ok: differences.length === 0,
        got:
          differences.length === 0
            ? 'the same document'
            : `a document differing at ${shown}${more}`,
      };
    },
  );
  await check(
    'version',
    `info.version ${INTERFACE_VERSION} and build ${BUILD_VERSION} in /healthz`,
    async () => {
      const info = isRecord(served) && isRecord(served.info) ? served.info.version : undefined;
      const health = await send(`${base.root}/healthz`);
      const build = isRecord(health.json) ? health.json.version : undefined;
      return {
        ok: info === INTERFACE_VERSION && build === BUILD_VERSION,
        got:
          `info.version ${info === undefined ? '(no document)' : JSON.stringify(info)}, ` +
          `/healthz ${health.status} ${build === undefined ? 'without a version' : `version ${JSON.stringify(build)}`}`,
      };
    },
  );
  return { failed, total };
}

/** Never says what it got: the value may be a secret typed in the wrong place. */
const NOT_A_KEY = 'the key must be an API key (pa_live_... or pa_test_..., 44 characters)';

/** The first line of standard input, without its line end (a key piped in or typed). */
async function firstLine(stdin: AsyncIterable<string | Buffer>): Promise<string> {
  let text = '';
  for await (const chunk of stdin) {
    text += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    if (text.includes('\n') || text.length > 1_000) break;
  }
  return (text.split(/\r?\n/)[0] ?? '').trim();
}

export const check: RemoteCommand = {
  name: 'check',
  kind: 'remote',
  summary: 'check a live deployment against the contract of this build (exit 0 when all hold)',
  help: [
    'Usage: PETSTORE_API_KEY=K petstore check <base-url> [--allow-writes]',
    '       petstore check <base-url> --key - [--allow-writes]   (the key on standard input)',
    '',
    'Sends a few requests to the deployment at <base-url> (e.g. https://pets.example.com/v1; the',
    '/v1 may be left out) and prints one line per check, PASS, FAIL or SKIP, with what was',
    'expected and what came back:',
    '  no key, bad key      401 with the Error body and WWW-Authenticate',
    '  listPets             200 with a JSON array, with the key',
    '  rate-limit headers   X-RateLimit-* and RateLimit / RateLimit-Policy',
    '  createPet            201, Location (only with --allow-writes)',
    '  getPet               the same pet, with Deprecation, Sunset and Link (successor-version)',
    '  getPet unknown id    404, with the same headers',
    "  OpenAPI document     /v1/openapi.json equal to this build's (servers aside)",
    '  version              info.version 1.0.0, and /healthz reports this build',
    '',
    'Options:',
    '  PETSTORE_API_KEY an API key of that deployment (its environment: pa_live_ or pa_test_)',
    '  --key -          read that key from standard input instead (its first line)',
    '  --key K          the key itself: works, with a warning, since a command line is seen by',
    '                   others (ps) and kept (shell history)',
    '  --allow-writes   create one pet named "petstore check <time>" (it stays in the store)',
    '',
    'Exit status: 0 when every check holds, 1 when one fails, 2 when called wrongly.',
    'It reads no configuration and opens no database: run it from anywhere the CLI is installed.',
  ].join('\n'),
  usageStatus: 2,
  prepare(args) {
    const { values, positionals } = parseCommandArgs(
      args,
      { key: { type: 'string' }, 'allow-writes': { type: 'boolean', default: false } },
      true,
    );
    const [raw, ...extra] = positionals;
    if (raw === undefined || raw === '')
      throw new UsageError("the deployment's <base-url> is required");
    if (extra.length > 0)
      throw new UsageError(`one <base-url> at a time, please (got ${positionals.length})`);
    const where = target(raw);
    const given = values.key;
    if (given !== undefined && given !== '-' && !API_KEY_PATTERN.test(given)) {
      throw new UsageError(NOT_A_KEY);
    }
    const allowWrites = values['allow-writes'] === true;

    return async ({ stdout, stderr, env, stdin }) => {
      let key: string;
      if (given === '-') {
        key = await firstLine(stdin);
      } else if (given !== undefined) {
        key = given;
        stderr.write(
          'petstore check: warning: --key K shows the key to anyone who lists processes and keeps it in shell history; set PETSTORE_API_KEY or pipe it to --key - instead\n',
        );
      } else {
        const fromEnv = env.PETSTORE_API_KEY;
        if (fromEnv === undefined || fromEnv === '') {
          throw new UsageError(
            'an API key of that deployment is required: set PETSTORE_API_KEY, or pipe it to --key -',
          );
        }
        key = fromEnv;
      }
      if (!API_KEY_PATTERN.test(key)) throw new UsageError(NOT_A_KEY);
      const options: Options = { target: where, key, allowWrites };
      stdout.write(`Checking ${options.target.v1} against this build (${BUILD_VERSION}):\n`);
      const { failed, total } = await runChecks(options, stdout);
      if (failed.length > 0) {
        throw new CommandError(`${failed.length} of ${total} checks failed: ${failed.join(', ')}`);
      }
      stdout.write(`All ${total} checks passed.\n`);
    };
  },
};

import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pet } from '../../src/domain/pets/pet.js';
import { MAX_CUSTOM_LIMIT } from '../../src/domain/rate-limits/plans.js';
import {
  type Answer,
  categoryIdText,
  codeOf,
  errorProblems,
  pageProblems,
  petProblems,
} from '../fuzz/checks.js';
import { bodyCase } from '../fuzz/json-bodies.js';
import { getCase, listCase } from '../fuzz/queries.js';
import { KEY, rawCase } from '../fuzz/raw-requests.js';
import { parseAnswers, sendRaw } from '../fuzz/send-raw.js';
import { fuzzRuns, fuzzSeed, Tally } from '../fuzz/tally.js';
import { call, useServer } from '../helpers/test-server.js';

/**
 * The fuzz suite (test/fuzz/README.md): generated bodies, queries and whole malformed requests,
 * with a key that is never rate-limited, so every case reaches the code it aims at. A short run
 * here; `npm run fuzz` makes 100,000 cases.
 */

const server = useServer();
const tally = new Tally();
const RUNS = fuzzRuns(600);
/** Of the cases: 40% bodies, 20% reads, 40% raw requests. */
const runs = {
  bodies: Math.ceil(RUNS * 0.4),
  reads: Math.ceil(RUNS * 0.2),
  raw: Math.ceil(RUNS * 0.4),
};
/** Generous: a case takes a few milliseconds; a hang is caught per case (test/fuzz/send-raw.ts). */
const timeoutFor = (cases: number) => Math.max(60_000, cases * 200);

let key = '';
/** The highest pet id seen: pets above it are the ones the last case created. */
let lastId = 0;

async function createdSinceLastCase(): Promise<Pet[]> {
  const pets = await server().storage.pets.list({ afterId: lastId, limit: 1_000 });
  lastId = pets.at(-1)?.id ?? lastId;
  return pets;
}

function answerOf(res: { status: number; headers: Headers; text: string }): Answer {
  return { status: res.status, headers: Object.fromEntries(res.headers), body: res.text };
}

function describeAnswer(answer: Answer): string {
  return `${answer.status} ${answer.body.slice(0, 300)}`;
}

beforeAll(async () => {
  // Enterprise at the highest custom limits a key may have: no case is ever answered 429.
  key = (
    await server().createKey('enterprise', {
      perMinute: MAX_CUSTOM_LIMIT,
      perDay: MAX_CUSTOM_LIMIT,
    })
  ).key;
});

afterAll(() => {
  console.log(tally.summary());
});

describe('fuzzing with a key that is never rate-limited', () => {
  it(
    'answers every generated POST /v1/pets body as the rules say, and creates a pet only on 201',
    async () => {
      await fc.assert(
        fc.asyncProperty(bodyCase, async (c) => {
          const res = await call(server(), 'POST', '/v1/pets', {
            key,
            rawBody: c.bytes,
            headers: { 'content-type': 'application/json' },
          });
          const answer = answerOf(res);
          const code = codeOf(answer);
          tally.count('POST /v1/pets', answer, code);
          const created = await createdSinceLastCase();
          const problems = errorProblems(answer);
          const expected = c.outcome;
          if (res.status !== expected.status || ('code' in expected && code !== expected.code)) {
            problems.push(
              `expected ${expected.status} ${'code' in expected ? expected.code : ''}, got ${describeAnswer(answer)}`,
            );
          }
          if (res.status === 201 && expected.status === 201) {
            const pet = res.body as Record<string, unknown>;
            problems.push(...petProblems(pet));
            if (pet.name !== expected.pet.name) problems.push(`name ${JSON.stringify(pet.name)}`);
            if (categoryIdText(res.text) !== String(expected.pet.categoryId))
              problems.push(`categoryId ${categoryIdText(res.text)}`);
            if (pet.status !== expected.pet.status) problems.push(`status ${String(pet.status)}`);
            if (res.headers.get('location') !== `/v1/pets/${String(pet.id)}`)
              problems.push(`Location ${res.headers.get('location')}`);
            const [stored, ...more] = created;
            if (stored === undefined || more.length > 0 || stored.id !== pet.id) {
              problems.push(`a 201 stored ${created.length} pets`);
            } else if (
              stored.name !== expected.pet.name ||
              stored.categoryId !== expected.pet.categoryId ||
              stored.status !== expected.pet.status
            ) {
              problems.push(
                `stored ${JSON.stringify({ ...stored, categoryId: String(stored.categoryId) })}`,
              );
            }
          } else if (created.length > 0) {
            problems.push(`a ${res.status} created ${created.length} pets`);
          }
          expect(problems, c.steps.join('; ')).toEqual([]);
        }),
        { numRuns: runs.bodies, ...fuzzSeed() },
      );
      expect([...tally.statuses('POST /v1/pets')]).toEqual(expect.arrayContaining([201, 400]));
      expect(tally.statuses('POST /v1/pets').has(429)).toBe(false);
    },
    timeoutFor(runs.bodies),
  );

  it(
    'answers every generated GET /v1/pets query and pet id as the rules say',
    async () => {
      const read = fc.oneof(
        listCase.map((list) => ({ list, get: undefined })),
        getCase(() => lastId).map((get) => ({ get, list: undefined })),
      );
      await fc.assert(
        fc.asyncProperty(read, async ({ list, get }) => {
          const path = list
            ? `/v1/pets${list.query === '' ? '' : `?${list.query}`}`
            : `/v1/pets/${get?.segment}`;
          const res = await call(server(), 'GET', path, { key });
          const answer = answerOf(res);
          const code = codeOf(answer);
          tally.count(list ? 'GET /v1/pets' : 'GET /v1/pets/{petId}', answer, code);
          const problems = errorProblems(answer);
          const bad = res.status === 400 && code === 'invalid_parameter';
          if (list) {
            const ok = res.status === 200;
            if (list.verdict === 'ok' ? !ok : list.verdict === 'bad' ? !bad : !ok && !bad) {
              problems.push(`expected ${list.verdict}, got ${describeAnswer(answer)}`);
            }
            if (ok) problems.push(...pageProblems(res.text, list));
          } else if (get) {
            if (typeof get.verdict === 'object') {
              const stored = await server().storage.pets.get(get.verdict.id);
              const status = stored ? 200 : 404;
              if (res.status !== status || (status === 404 && code !== 'not_found'))
                problems.push(`expected ${status}, got ${describeAnswer(answer)}`);
            } else if (get.verdict === 'bad-path') {
              if (res.status !== 400 || code !== 'bad_request') {
                problems.push(`expected 400 bad_request, got ${describeAnswer(answer)}`);
              }
            } else if (get.verdict === 'bad' ? !bad : ![200, 404].includes(res.status) && !bad) {
              problems.push(`expected ${get.verdict}, got ${describeAnswer(answer)}`);
            }
            if (res.status === 200) problems.push(...petProblems(res.body));
            // A path that is not text is refused before routing, where no operation is known.
            if (code !== 'bad_request' && res.headers.get('deprecation') === null) {
              problems.push('no Deprecation header');
            }
          }
          const created = await createdSinceLastCase();
          if (created.length > 0) problems.push(`a read created ${created.length} pets`);
          expect(problems, list ? list.steps.join('; ') : path).toEqual([]);
        }),
        { numRuns: runs.reads, ...fuzzSeed() },
      );
      expect([...tally.statuses('GET /v1/pets')]).toEqual(expect.arrayContaining([200, 400]));
      expect([...tally.statuses('GET /v1/pets/{petId}')]).toEqual(
        expect.arrayContaining([200, 400, 404]),
      );
    },
    timeoutFor(runs.reads),
  );

  it(
    'answers every malformed raw request with no 5xx, the Error body on refusals, and no stray pet',
    async () => {
      await fc.assert(
        fc.asyncProperty(rawCase, async (c) => {
          // Requests without a valid key share 30 a minute per address: each case gets a fresh minute.
          server().clock.advance(60_000);
          const bytes = Buffer.from(
            Buffer.from(c.bytes).toString('latin1').replaceAll(KEY, key),
            'latin1',
          );
          const { received, timedOut, error } = await sendRaw(server().url, bytes);
          const answers = parseAnswers(received, c.method === 'HEAD');
          const created = await createdSinceLastCase();
          const problems: string[] = [];
          if (timedOut)
            problems.push(`no answer and no close within 10 s: ${received.slice(0, 200)}`);
          if (answers.length === 0)
            problems.push(`no answer (${error ?? 'closed'}): ${received.slice(0, 200)}`);
          for (const answer of answers) {
            tally.count('raw', answer, codeOf(answer));
            problems.push(...errorProblems(answer));
          }
          const [first] = answers;
          // A conditional GET (If-None-Match: *) may be answered 304 where a 200 is expected.
          const conditional = /\r\nif-none-match:/i.test(Buffer.from(c.bytes).toString('latin1'));
          if (
            first &&
            c.expected &&
            !c.expected.answers.some(
              (a) =>
                (a.status === first.status ||
                  (conditional && a.status === 200 && first.status === 304)) &&
                (a.code === undefined || first.head || a.code === codeOf(first)),
            )
          ) {
            problems.push(
              `expected ${c.expected.answers.map((a) => `${a.status} ${a.code ?? ''}`).join(' or ')}, got ${describeAnswer(first)}`,
            );
          }
          if (first?.status === 200 && c.list) problems.push(...pageProblems(first.body, c.list));
          const creations = answers.filter(
            (a) => a.status === 201 && a.headers['idempotent-replayed'] !== 'true',
          ).length;
          if (created.length !== creations)
            problems.push(`${creations} answers created a pet, ${created.length} pets were stored`);
          expect(problems, c.steps.join('; ')).toEqual([]);
        }),
        { numRuns: runs.raw, ...fuzzSeed() },
      );
      // Rarer answers are only required of a long run, so a short one cannot fail by chance.
      const rare = runs.raw >= 10_000 ? [201, 413, 415, 431] : [];
      expect([...tally.statuses('raw')]).toEqual(
        expect.arrayContaining([200, 400, 401, 404, 405, ...rare]),
      );
      expect(tally.statuses('raw').has(429)).toBe(false);
    },
    timeoutFor(runs.raw),
  );
});

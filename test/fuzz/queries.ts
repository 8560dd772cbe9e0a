import fc from 'fast-check';
import { encodeCursor } from '../../src/domain/pets/cursor.js';
import { INT64_MAX, PAGE_SIZE, type PetStatus } from '../../src/domain/pets/pet.js';
import {
  ListPetsQuerySchema,
  PetStatusSchema,
} from '../../src/http/apps/public/pets/pet.schema.js';

/**
 * Query strings for GET /v1/pets and ids for GET /v1/pets/{petId}, each with what the answer must
 * be: `ok` (200), `bad` (400 invalid_parameter) or `either`, for spellings the decisions leave
 * open (`limit=+5`, a malformed percent-escape). The parameter names and bounds come from
 * ListPetsQuerySchema.
 */

/** `arbitrary` once in `every` cases, else undefined. (fc.option's freq is the other way round.) */
export function rarely<T>(arbitrary: fc.Arbitrary<T>, every: number): fc.Arbitrary<T | undefined> {
  return fc.oneof(
    { weight: every - 1, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary },
  );
}

export type Verdict = 'ok' | 'bad' | 'either';

export interface ListCase {
  query: string;
  verdict: Verdict;
  /** What a 200 must respect: the page size, the filter and the cursor's position. */
  limit: number;
  status?: PetStatus;
  afterId?: number;
  steps: string[];
}

export interface GetCase {
  /** The path segment after /v1/pets/, as sent. */
  segment: string;
  /**
   * `id`: a 200 when that pet exists, else 404. `bad-path`: percent-encoding that decodes to no
   * text, refused before routing with 400 bad_request.
   */
  verdict: Verdict | 'bad-path' | { id: bigint };
}

const STATUSES = PetStatusSchema.enum as PetStatus[];
const PARAMETERS = Object.keys(ListPetsQuerySchema.properties);

function worse(a: Verdict, b: Verdict): Verdict {
  if (a === 'bad' || b === 'bad') return 'bad';
  return a === 'either' || b === 'either' ? 'either' : 'ok';
}

interface Param {
  name: string;
  value: string;
  verdict: Verdict;
  /** The meaning of a valid value. */
  limit?: number;
  status?: PetStatus;
  cursor?: { afterId: number; status: PetStatus | undefined };
}

const limit: fc.Arbitrary<Param> = fc.oneof(
  fc
    .integer({ min: PAGE_SIZE.min, max: PAGE_SIZE.max })
    .map((n) => ({ name: 'limit', value: String(n), verdict: 'ok' as const, limit: n })),
  fc
    .oneof(
      fc.constantFrom(
        '0',
        '-1',
        String(PAGE_SIZE.max + 1),
        'abc',
        '1.5',
        '',
        '9'.repeat(30),
        '0x10',
        '\uFF12',
        'NaN',
        'true',
        '[]',
      ),
      fc.integer({ min: PAGE_SIZE.max + 1 }).map(String),
      fc.integer({ max: PAGE_SIZE.min - 1 }).map(String),
    )
    .map((value) => ({ name: 'limit', value, verdict: 'bad' as const })),
  // Integers spelled in ways the decisions name neither way.
  fc
    .constantFrom('1e1', '+5', '05', ' 5', '5 ', '5.0', '1E1')
    .map((value) => ({ name: 'limit', value, verdict: 'either' as const })),
);

const status: fc.Arbitrary<Param> = fc.oneof(
  fc
    .constantFrom(...STATUSES)
    .map((s) => ({ name: 'status', value: s, verdict: 'ok' as const, status: s })),
  fc
    .oneof(
      fc.constantFrom('', 'adopted', 'SOLD', 'Sold', ' sold', 'sold,pending', 'null'),
      fc.string({ maxLength: 8 }),
    )
    .filter((s) => !(STATUSES as string[]).includes(s))
    .map((value) => ({ name: 'status', value, verdict: 'bad' as const })),
);

const base64url = (text: string) => Buffer.from(text).toString('base64url');

const cursor: fc.Arbitrary<Param> = fc.oneof(
  fc
    .tuple(fc.nat({ max: 100_000 }), fc.option(fc.constantFrom(...STATUSES), { nil: undefined }))
    .map(([afterId, s]) => ({
      name: 'cursor',
      value: encodeCursor(afterId, s),
      verdict: 'ok' as const,
      cursor: { afterId, status: s },
    })),
  fc
    .oneof(
      fc.constantFrom(
        '',
        '!',
        'p1',
        '====',
        'a'.repeat(65),
        'a'.repeat(201),
        '../../etc/passwd',
        '%00',
      ),
      fc
        .constantFrom(
          'p1|abc|',
          'p1|-1|',
          'p1|1|adopted',
          'p1|1|sold|x',
          'p2|1|',
          `p1|${'9'.repeat(17)}|`,
          `p1|${2 ** 53}|`,
          '\u0000',
          'p1|1|\uFFFD',
        )
        .map(base64url),
      fc.string({ maxLength: 20 }).map(base64url),
      fc.string({ maxLength: 30 }),
    )
    .map((value) => ({ name: 'cursor', value, verdict: 'bad' as const })),
);

const unknown: fc.Arbitrary<Param> = fc
  .oneof(
    fc.constantFrom(
      'statuss',
      'LIMIT',
      'Status',
      'offset',
      'page',
      'id',
      '__proto__',
      'constructor',
    ),
    fc.string({ minLength: 1, maxLength: 8 }),
  )
  .filter((name) => !PARAMETERS.includes(name))
  .map((name) => ({ name, value: '1', verdict: 'bad' as const }));

type Encoding = 'plain' | 'component' | 'all';

/** Percent-encodes every byte: `%6C%69%6D%69%74` is `limit` to any decoder. */
function encodeAll(text: string): string {
  return [...Buffer.from(text)]
    .map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`)
    .join('');
}

function encodePart(text: string, how: Encoding): string {
  if (how === 'all') return encodeAll(text);
  // 'plain' still escapes what would end the part or the request line.
  return how === 'component'
    ? encodeURIComponent(text)
    : text.replace(/[%&=#+\s]|[^\x21-\x7E]/gu, (c) => encodeURIComponent(c));
}

/** Junk that is not a parameter of any kind: left for the parser to make what it will of it. */
const junk = fc.constantFrom(
  '&',
  '&&',
  '=',
  '=x',
  'a',
  '%zz',
  '%',
  'limit=%ff',
  'status=%C0%AF',
  ';',
  '#frag',
  'limit=5=5',
);

export const listCase: fc.Arbitrary<ListCase> = fc
  .tuple(
    fc.array(
      fc.oneof(
        { weight: 3, arbitrary: limit },
        { weight: 3, arbitrary: status },
        { weight: 2, arbitrary: cursor },
        { weight: 1, arbitrary: unknown },
      ),
      { maxLength: 4 },
    ),
    fc.constantFrom<Encoding>('plain', 'plain', 'component', 'all'),
    rarely(junk, 6),
  )
  .map(([params, how, extra]) => {
    const steps = params.map((p) => `${p.name}=${p.value.slice(0, 40)} (${p.verdict})`);
    let verdict: Verdict = params.reduce<Verdict>((v, p) => worse(v, p.verdict), 'ok');
    // A parameter given twice arrives as an array, which no parameter schema takes.
    const names = params.map((p) => p.name);
    if (names.some((n, i) => names.indexOf(n) !== i)) {
      verdict = worse(verdict, 'either');
      steps.push('repeated');
    }
    const last = <K extends 'limit' | 'status' | 'cursor'>(key: K) =>
      params.filter((p) => p[key] !== undefined).at(-1)?.[key];
    const statusFilter = last('status');
    const position = last('cursor');
    // A cursor belongs to one filter; with another it is refused.
    if (position !== undefined && position.status !== statusFilter) verdict = worse(verdict, 'bad');
    let query = params
      .map((p) => `${encodePart(p.name, how)}=${encodePart(p.value, how)}`)
      .join('&');
    if (extra !== undefined) {
      query = query === '' ? extra : `${query}&${extra}`;
      verdict = worse(verdict, 'either');
      steps.push(`junk ${extra}`);
    }
    return {
      query,
      verdict,
      limit: last('limit') ?? (verdict === 'ok' ? PAGE_SIZE.default : PAGE_SIZE.max),
      ...(statusFilter !== undefined ? { status: statusFilter } : {}),
      ...(position !== undefined ? { afterId: position.afterId } : {}),
      steps,
    };
  });

export function getCase(maxId: () => number): fc.Arbitrary<GetCase> {
  return fc.oneof(
    // A pet that exists (or did not yet when fewer were created): 200 or 404, the store decides.
    fc.nat({ max: 1_000 }).map((n) => {
      const id = BigInt(Math.max(1, maxId() - (n % Math.max(1, maxId()))));
      return { segment: String(id), verdict: { id } };
    }),
    fc
      .oneof(
        fc.bigInt({ min: 1n, max: INT64_MAX }),
        fc.constantFrom(1n, 2n ** 53n - 1n, 2n ** 53n, INT64_MAX),
      )
      .map((id) => ({ segment: String(id), verdict: { id } })),
    fc
      .constantFrom(
        '0',
        '-1',
        String(INT64_MAX + 1n),
        '1'.repeat(40),
        'abc',
        '1.5',
        '%20',
        '1%00',
        'null',
        '1;2',
        '1,2',
        '0x1',
        '%F0%9F%98%80',
      )
      .map((segment) => ({ segment, verdict: 'bad' as const })),
    fc
      .constantFrom('01', '1e2', '+1', '%2B1', '1.0', '%31')
      .map((segment) => ({ segment, verdict: 'either' as const })),
  );
}

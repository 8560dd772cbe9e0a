import fc from 'fast-check';
import { binaryString } from './code-points.js';
import { INT64_MAX } from '../../src/domain/pets/pet.js';
import { BODY_LIMIT_BYTES } from '../../src/http/request-limits.js';
import { NewPetSchema, PetStatusSchema } from '../../src/http/apps/public/pets/pet.schema.js';
import { MAX_DEPTH } from '../../src/http/validation/strict-json.js';

/**
 * Bodies for POST /v1/pets, each with the answer the service owes it. Valid NewPets are generated
 * from the TypeBox schema (its properties, required list, bounds and enum) and then mutated; the
 * answer is worked out here from the rules in the design decisions, independently of the
 * validator, so a validator that drifts from those rules fails the property.
 */

/** What a JSON value is, as the rules need to know it: integers exactly, fractions as such. */
export type Decoded =
  | { kind: 'string'; value: string }
  | { kind: 'integer'; value: bigint }
  | { kind: 'fraction' }
  | { kind: 'other' };

/** A JSON value as written on the wire. `broken` when the text itself is not valid JSON. */
interface Piece {
  text: string;
  decoded: Decoded;
  broken: boolean;
  /** How many arrays and objects the value opens inside each other, when that can be too many. */
  depth?: number;
}

interface Member {
  /** The key after JSON unescaping: what duplicate detection and the validator see. */
  key: string;
  keyText: string;
  value: Piece;
}

export type BodyOutcome =
  | { status: 201; pet: { name: string; categoryId: bigint; status?: string } }
  | { status: 400; code: 'invalid_json' | 'invalid_body' }
  | { status: 413; code: 'payload_too_large' };

export interface BodyCase {
  bytes: Uint8Array;
  outcome: BodyOutcome;
  /** What was done to the body, for the report of a failing case. */
  steps: string[];
}

// ---------------------------------------------------------------------------------------------
// What the schema says. Read from it, so a new field or bound shows up here without an edit.

interface StringField {
  kind: 'string';
  minLength: number;
  maxLength: number;
}
interface IntegerField {
  kind: 'integer';
  minimum: bigint;
}
interface EnumField {
  kind: 'enum';
  values: readonly string[];
}
type FieldSpec = StringField | IntegerField | EnumField;

function fieldSpec(schema: Record<string, unknown>): FieldSpec {
  if (schema.$ref === PetStatusSchema.$id || Array.isArray(schema.enum)) {
    const values = (Array.isArray(schema.enum) ? schema.enum : PetStatusSchema.enum) as string[];
    return { kind: 'enum', values };
  }
  if (schema.type === 'string') {
    return {
      kind: 'string',
      minLength: Number(schema.minLength ?? 0),
      maxLength: Number(schema.maxLength ?? 1_000),
    };
  }
  if (schema.type === 'integer' && schema.format === 'int64') {
    return { kind: 'integer', minimum: BigInt(Number(schema.minimum ?? -Infinity)) };
  }
  throw new Error(`no generator for the schema ${JSON.stringify(schema)}`);
}

export const FIELDS: ReadonlyArray<{ name: string; required: boolean; spec: FieldSpec }> =
  Object.entries(NewPetSchema.properties).map(([name, schema]) => ({
    name,
    required: ((NewPetSchema.required ?? []) as string[]).includes(name),
    spec: fieldSpec(schema as unknown as Record<string, unknown>),
  }));

// ---------------------------------------------------------------------------------------------
// The rules, as docs/decisions state them (not as the validator implements them).

function codePoints(s: string): number {
  return [...s].length;
}

function hasLoneSurrogate(s: string): boolean {
  return /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);
}

export function isValidString(value: string, spec: StringField): boolean {
  const length = codePoints(value);
  return (
    length >= spec.minLength &&
    length <= spec.maxLength &&
    value.trim() !== '' &&
    ![...value].some((c) => c.charCodeAt(0) < 0x20 || c === '\u007F') &&
    !hasLoneSurrogate(value)
  );
}

function isValid(decoded: Decoded, spec: FieldSpec): boolean {
  switch (spec.kind) {
    case 'string':
      return decoded.kind === 'string' && isValidString(decoded.value, spec);
    case 'integer':
      return (
        decoded.kind === 'integer' && decoded.value >= spec.minimum && decoded.value <= INT64_MAX
      );
    case 'enum':
      return decoded.kind === 'string' && spec.values.includes(decoded.value);
  }
}

// ---------------------------------------------------------------------------------------------
// Writing strings: the same string in several legal JSON spellings.

type Escaping = 'plain' | 'ascii' | 'all' | 'solidus';

function escapeUnit(unit: number): string {
  return `\\u${unit.toString(16).padStart(4, '0')}`;
}

/** `s` as a JSON string. JSON.stringify escapes controls and lone surrogates, as JSON requires. */
export function jsonString(s: string, escaping: Escaping = 'plain'): string {
  switch (escaping) {
    case 'plain':
      return JSON.stringify(s);
    case 'solidus':
      return JSON.stringify(s).replaceAll('/', '\\/');
    case 'ascii':
      return JSON.stringify(s).replace(/[^\x20-\x7E]/g, (c) => escapeUnit(c.charCodeAt(0)));
    case 'all':
      return `"${[...Array(s.length).keys()].map((i) => escapeUnit(s.charCodeAt(i))).join('')}"`;
  }
}

const escaping = fc.constantFrom<Escaping>('plain', 'plain', 'ascii', 'all', 'solidus');

function stringPiece(s: fc.Arbitrary<string>): fc.Arbitrary<Piece> {
  return fc.tuple(s, escaping).map(([value, how]) => ({
    text: jsonString(value, how),
    decoded: { kind: 'string', value },
    broken: false,
  }));
}

const other = (text: string): Piece => ({ text, decoded: { kind: 'other' }, broken: false });
const broken = (text: string): Piece => ({ text, decoded: { kind: 'other' }, broken: true });

/** What a JSON value generated as a JavaScript value is to the rules. */
function decodedOf(value: unknown): Decoded {
  if (typeof value === 'string') return { kind: 'string', value };
  if (typeof value === 'number') {
    return Number.isInteger(value)
      ? { kind: 'integer', value: BigInt(value) }
      : { kind: 'fraction' };
  }
  return { kind: 'other' };
}

/**
 * Values of every other JSON type, for a field that wants a string or an integer. Whatever
 * fc.jsonValue makes (a string or a number too) is judged as what it is.
 */
const wrongTypes: fc.Arbitrary<Piece> = fc.oneof(
  fc.constantFrom('null', 'true', 'false', '[]', '{}', '[1]', '{"a":1}', '[null]').map(other),
  fc
    .jsonValue({ maxDepth: 2 })
    .map((v): Piece => ({ text: JSON.stringify(v), decoded: decodedOf(v), broken: false })),
);

// ---------------------------------------------------------------------------------------------
// Strings.

/** Characters that tend to break things: controls, blanks, BOM, surrogate halves, RTL, emoji. */
const special = fc.constantFrom(
  '\u0000',
  '\u0001',
  '\t',
  '\n',
  '\u001F',
  '\u007F',
  '\u0080',
  '\u009F',
  ' ',
  '\u00A0',
  '\u2028',
  '\u3000',
  '\uFEFF',
  '\u200B',
  '\u202E',
  '\uD800',
  '\uDFFF',
  '\uD83D\uDE00',
  'e\u0301',
  '"',
  '\\',
  '/',
  '%00',
  '<script>',
  "'; DROP TABLE pets; --",
  '${x}',
  '\u{10FFFF}',
);

const specialString = fc
  .array(fc.oneof(special, fc.string({ maxLength: 3 })), { maxLength: 12 })
  .map((parts) => parts.join(''));

const anyString = (maxLength: number): fc.Arbitrary<string> =>
  fc.oneof(
    fc.string({ maxLength }),
    fc.string({ unit: 'grapheme', maxLength }),
    binaryString(maxLength),
    specialString,
  );

function validStrings(spec: StringField): fc.Arbitrary<string> {
  const fill = (unit: string, n: number) => unit.repeat(Math.max(1, n));
  return fc
    .oneof(
      { weight: 4, arbitrary: anyString(spec.maxLength) },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          fill('a', spec.maxLength),
          fill('\u{1F600}', spec.maxLength),
          fill('é', spec.maxLength),
          fill('x', spec.minLength),
          ' x ',
          'O\u2019Malley',
        ),
      },
    )
    .filter((s) => isValidString(s, spec));
}

function invalidStrings(spec: StringField): fc.Arbitrary<Piece> {
  const over = spec.maxLength + 1;
  return fc.oneof(
    stringPiece(
      fc.oneof(
        fc.constantFrom(
          '',
          ' ',
          '\u00A0\u3000',
          '\uFEFF',
          'a'.repeat(over),
          '\u{1F600}'.repeat(over),
          'a\u0000b',
          'a\nb',
          'a\u007F',
          '\uD800',
          'a\uDC00b',
          'x'.repeat(5_000),
        ),
        specialString.filter((s) => !isValidString(s, spec)),
      ),
    ),
    wrongTypes,
    // Not JSON: a raw control character, a bad escape, an unterminated string.
    fc
      .constantFrom('"a\u0001b"', '"a\nb"', '"\\x41"', '"\\u12"', '"\\u12G4"', '"abc', "'abc'")
      .map(broken),
  );
}

// ---------------------------------------------------------------------------------------------
// Integers, written in every JSON form that means an integer (JSON Schema's integer: 1.0 and 1e2
// are integers) and in forms that are not integers or not JSON.

function integerPiece(value: bigint, form: number): Piece {
  const sign = value < 0n ? '-' : '';
  const digits = (value < 0n ? -value : value).toString();
  const stripped = digits.replace(/0+$/, '');
  const zeros = digits.length - stripped.length;
  // JSON allows no leading zero, so 0 has fewer spellings ("00e-1" is not JSON).
  const forms =
    digits === '0'
      ? ['0', '0.0', '0.000', '0e0', '-0', '-0.0', '0E+3', '-0e-1']
      : [
          digits,
          `${digits}.0`,
          `${digits}.000`,
          `${digits}0e-1`,
          `${digits}00E-2`,
          `${digits}e0`,
          zeros > 0 && stripped !== '' ? `${stripped}e${zeros}` : digits,
          zeros > 0 && stripped !== '' ? `${stripped}E+${zeros}` : digits,
        ];
  return {
    text: sign + forms[form % forms.length],
    decoded: { kind: 'integer', value },
    broken: false,
  };
}

const integerForm = fc.nat({ max: 7 });

function validIntegers(spec: IntegerField): fc.Arbitrary<Piece> {
  const max = INT64_MAX;
  return fc
    .tuple(
      fc.oneof(
        fc.bigInt({ min: spec.minimum, max: spec.minimum + 1_000n }),
        fc.bigInt({ min: spec.minimum, max }),
        fc.constantFrom(
          spec.minimum,
          2n ** 53n - 1n,
          2n ** 53n,
          2n ** 53n + 1n,
          max - 1n,
          max,
          10n ** 18n,
        ),
      ),
      fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, { weight: 2, arbitrary: integerForm }),
    )
    .map(([value, form]) => integerPiece(value, form));
}

function invalidIntegers(spec: IntegerField): fc.Arbitrary<Piece> {
  const fraction = (text: string): Piece => ({
    text,
    decoded: { kind: 'fraction' },
    broken: false,
  });
  return fc.oneof(
    fc
      .tuple(
        fc.oneof(
          fc.constantFrom(spec.minimum - 1n, -1n, -0n, INT64_MAX + 1n, 2n ** 64n, -(2n ** 63n)),
          fc.bigInt({ min: -(2n ** 70n), max: spec.minimum - 1n }),
          fc.bigInt({ min: INT64_MAX + 1n, max: 2n ** 70n }),
        ),
        integerForm,
      )
      .map(([value, form]) => integerPiece(value, form)),
    // Integers too large to be any int64, written so they stay short.
    fc.constantFrom('1e19', '1e400', '1E1000000000', '9'.repeat(1_001)).map((text): Piece => ({
      text,
      decoded: { kind: 'integer', value: INT64_MAX + 1n },
      broken: false,
    })),
    fc
      .constantFrom(
        '1.5',
        '0.5',
        '1e-1',
        '1.0000000000000001',
        '9223372036854775806.5',
        '1e-400',
        '2.5e0',
      )
      .map(fraction),
    fc
      .bigInt({ min: spec.minimum, max: 10n ** 6n })
      .map((v) => fraction(`${v}.${'0'.repeat(20)}1`)),
    stringPiece(fc.constantFrom('1', '42', '9223372036854775807', '')),
    wrongTypes,
    fc
      .constantFrom(
        '01',
        '+1',
        '.5',
        '1.',
        '0x10',
        'NaN',
        'Infinity',
        '-',
        '1e',
        '1e+',
        '--1',
        '1_000',
      )
      .map(broken),
  );
}

// ---------------------------------------------------------------------------------------------
// Enumerations.

function invalidEnums(spec: EnumField): fc.Arbitrary<Piece> {
  const near = spec.values.flatMap((v) => [
    v.toUpperCase(),
    ` ${v}`,
    `${v} `,
    `${v}\u0000`,
    v.slice(1),
  ]);
  return fc.oneof(
    stringPiece(fc.constantFrom('', 'adopted', ...near).filter((s) => !spec.values.includes(s))),
    stringPiece(fc.string({ maxLength: 10 }).filter((s) => !spec.values.includes(s))),
    wrongTypes,
    fc.constant(broken('available')),
  );
}

function validPiece(spec: FieldSpec): fc.Arbitrary<Piece> {
  switch (spec.kind) {
    case 'string':
      return stringPiece(validStrings(spec));
    case 'integer':
      return validIntegers(spec);
    case 'enum':
      return stringPiece(fc.constantFrom(...spec.values));
  }
}

function invalidPiece(spec: FieldSpec): fc.Arbitrary<Piece> {
  switch (spec.kind) {
    case 'string':
      return invalidStrings(spec);
    case 'integer':
      return invalidIntegers(spec);
    case 'enum':
      return invalidEnums(spec);
  }
}

// ---------------------------------------------------------------------------------------------
// Unknown members: any key the schema does not name, with any value, nested up to and past the
// parser's depth limit.

const KNOWN = new Set(FIELDS.map((f) => f.name));

const unknownKey = fc
  .oneof(
    fc.constantFrom(
      'id',
      'Name',
      'NAME',
      'name ',
      'category_id',
      'categoryid',
      '__proto__',
      'constructor',
      'toString',
      '',
      'n\u0430me',
      'status\u0000',
    ),
    fc.string({ maxLength: 12 }),
  )
  .filter((k) => !KNOWN.has(k));

/** `depth` arrays (or objects) inside each other, as a member value: the body is deeper still. */
function nested(depth: number, objects: boolean): Piece {
  const text = objects
    ? `${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`
    : `${'['.repeat(depth)}${']'.repeat(depth)}`;
  return { text, decoded: { kind: 'other' }, broken: false, depth };
}

const anyValue: fc.Arbitrary<Piece> = fc.oneof(
  { weight: 3, arbitrary: wrongTypes },
  { weight: 1, arbitrary: stringPiece(anyString(20)) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        fc.constantFrom(
          1,
          2,
          10,
          MAX_DEPTH - 2,
          MAX_DEPTH - 1,
          MAX_DEPTH,
          MAX_DEPTH + 1,
          1_000,
          5_000,
        ),
        fc.boolean(),
      )
      .map(([depth, objects]) => nested(depth, objects)),
  },
  // Never closed: not JSON however deep.
  { weight: 1, arbitrary: fc.constantFrom('['.repeat(8_000), '{"a":'.repeat(2_000)).map(broken) },
);

// ---------------------------------------------------------------------------------------------
// Mutations of a valid body.

type Mutation =
  | { kind: 'invalid'; field: number; piece: Piece }
  | { kind: 'drop'; field: number }
  | { kind: 'unknown'; key: string; escaping: Escaping; value: Piece }
  | { kind: 'duplicate'; field: number; piece: Piece }
  | {
      kind: 'syntax';
      how:
        | 'truncate'
        | 'trailing-comma'
        | 'garbage-after'
        | 'comment'
        | 'single-quotes'
        | 'empty'
        | 'blank';
      at: number;
    }
  | { kind: 'not-object'; wrap: 'array' | 'string' | 'number' | 'null' | 'true' }
  | { kind: 'bad-utf8'; bytes: readonly number[]; at: number }
  | { kind: 'bom' }
  | { kind: 'pad'; size: number };

const fieldIndex = fc.nat({ max: FIELDS.length - 1 });

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  {
    weight: 6,
    arbitrary: fieldIndex.chain((field) =>
      invalidPiece(FIELDS[field]!.spec).map((piece): Mutation => ({
        kind: 'invalid',
        field,
        piece,
      })),
    ),
  },
  { weight: 2, arbitrary: fieldIndex.map((field): Mutation => ({ kind: 'drop', field })) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('unknown' as const),
      key: unknownKey,
      escaping,
      value: anyValue,
    }),
  },
  {
    weight: 1,
    arbitrary: fieldIndex.chain((field) =>
      fc
        .oneof(validPiece(FIELDS[field]!.spec), invalidPiece(FIELDS[field]!.spec))
        .map((piece): Mutation => ({ kind: 'duplicate', field, piece })),
    ),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('syntax' as const),
      how: fc.constantFrom(
        'truncate',
        'trailing-comma',
        'garbage-after',
        'comment',
        'single-quotes',
        'empty',
        'blank',
      ),
      at: fc.nat(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('not-object' as const),
      wrap: fc.constantFrom('array', 'string', 'number', 'null', 'true'),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('bad-utf8' as const),
      bytes: fc.constantFrom(
        [0xff],
        [0xc0, 0x80],
        [0xed, 0xa0, 0x80],
        [0xe2, 0x82],
        [0x80],
        [0xf4, 0x90, 0x80, 0x80],
        [0xe0, 0x80, 0x80],
        [0xf8, 0x88, 0x80, 0x80, 0x80],
      ),
      at: fc.nat(),
    }),
  },
  { weight: 1, arbitrary: fc.constant<Mutation>({ kind: 'bom' }) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(
        BODY_LIMIT_BYTES - 1,
        BODY_LIMIT_BYTES,
        BODY_LIMIT_BYTES + 1,
        2 * BODY_LIMIT_BYTES,
        256 * 1024,
      )
      .map((size): Mutation => ({ kind: 'pad', size })),
  },
);

const whitespace = fc.constantFrom('', '', '', ' ', '\n', '\t', '\r\n  ');

/** A NewPet: every required field, some optional ones, valid values, written in a random order. */
const validMembers: fc.Arbitrary<Member[]> = fc
  .tuple(
    fc.tuple(
      ...FIELDS.map((f) =>
        fc.tuple(f.required ? fc.constant(true) : fc.boolean(), validPiece(f.spec), escaping),
      ),
    ),
    fc.nat(),
  )
  .map(([chosen, rotation]) => {
    const members = chosen.flatMap(([present, value, how], i) => {
      const name = FIELDS[i]!.name;
      return present ? [{ key: name, keyText: jsonString(name, how), value }] : [];
    });
    const r = members.length === 0 ? 0 : rotation % members.length;
    return [...members.slice(r), ...members.slice(0, r)];
  });

function encode(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

function build(members: Member[], mutations: Mutation[], ws: string): BodyCase {
  const steps: string[] = [];
  let list = [...members];
  let jsonBroken = false;
  let notObject = false;
  /** How deep the object is: its members' values are one deeper. */
  let objectDepth = 1;
  for (const m of mutations) {
    if (m.kind === 'invalid' || m.kind === 'duplicate' || m.kind === 'drop') {
      const name = FIELDS[m.field]!.name;
      steps.push(`${m.kind} ${name}${m.kind === 'drop' ? '' : ` = ${m.piece.text.slice(0, 60)}`}`);
      if (m.kind === 'drop') list = list.filter((x) => x.key !== name);
      else if (m.kind === 'duplicate')
        list.push({ key: name, keyText: JSON.stringify(name), value: m.piece });
      else {
        const at = list.findIndex((x) => x.key === name);
        const member = { key: name, keyText: JSON.stringify(name), value: m.piece };
        if (at < 0) list.push(member);
        else list[at] = member;
      }
    } else if (m.kind === 'unknown') {
      steps.push(`unknown ${JSON.stringify(m.key)} = ${m.value.text.slice(0, 60)}`);
      list.push({ key: m.key, keyText: jsonString(m.key, m.escaping), value: m.value });
    }
  }
  let text = `{${ws}${list.map((x) => `${x.keyText}${ws}:${ws}${x.value.text}`).join(`${ws},${ws}`)}${ws}}`;
  for (const m of mutations) {
    if (m.kind !== 'syntax') continue;
    steps.push(`syntax ${m.how}`);
    jsonBroken = true;
    // The object's closing brace is its last byte, so every proper prefix is unfinished.
    if (m.how === 'truncate') text = text.slice(0, m.at % (text.length - 1));
    else if (m.how === 'trailing-comma') text = `${text.slice(0, -1)},}`;
    else if (m.how === 'garbage-after') text = `${text} x`;
    else if (m.how === 'comment') text = `/* c */${text}`;
    else if (m.how === 'single-quotes') text = `{'a':1,${text.slice(1)}`;
    else if (m.how === 'empty') text = '';
    else text = ' \n\t ';
  }
  // Wrapping text that is already broken could mend it (`[]` around nothing), so it is not done.
  const wrap = mutations.find((m) => m.kind === 'not-object');
  if (wrap?.kind === 'not-object' && !jsonBroken) {
    steps.push(`not an object: ${wrap.wrap}`);
    notObject = true;
    text = {
      array: `[${text}]`,
      string: JSON.stringify(text),
      number: '42',
      null: 'null',
      true: 'true',
    }[wrap.wrap];
    // Only an array still holds the object, with its broken values and duplicate keys.
    if (wrap.wrap !== 'array') list = [];
    else objectDepth = 2;
  }
  let bytes = encode(text);
  for (const m of mutations) {
    if (m.kind === 'bad-utf8') {
      steps.push(`bad UTF-8 ${m.bytes.map((b) => b.toString(16)).join(' ')}`);
      // Inserted between two ASCII bytes (or the start or end), so it can neither complete a
      // sequence nor be completed by one inserted before: e2 82 then 80 at one place is U+2080.
      const isAscii = (i: number) => i < 0 || i >= bytes.length || (bytes[i] ?? 0) < 0x80;
      const ascii = [...bytes.keys(), bytes.length].filter((i) => isAscii(i - 1) && isAscii(i));
      const at = ascii[m.at % ascii.length] ?? 0;
      bytes = Uint8Array.from([...bytes.subarray(0, at), ...m.bytes, ...bytes.subarray(at)]);
      jsonBroken = true;
    } else if (m.kind === 'bom') {
      steps.push('byte order mark');
      bytes = Uint8Array.from([0xef, 0xbb, 0xbf, ...bytes]);
      jsonBroken = true;
    }
  }
  for (const m of mutations) {
    if (m.kind === 'pad' && bytes.length < m.size) {
      steps.push(`padded to ${m.size} bytes`);
      // White space before the first byte is JSON's own, so only the size changes.
      const padded = new Uint8Array(m.size).fill(0x20);
      padded.set(bytes, m.size - bytes.length);
      bytes = padded;
    }
  }

  const keys = list.map((x) => x.key);
  const duplicate = keys.some((k, i) => keys.indexOf(k) !== i);
  if (duplicate) steps.push('duplicate key');
  const outcome = ((): BodyOutcome => {
    if (bytes.length > BODY_LIMIT_BYTES) return { status: 413, code: 'payload_too_large' };
    if (
      jsonBroken ||
      duplicate ||
      list.some((x) => x.value.broken || objectDepth + (x.value.depth ?? 0) > MAX_DEPTH)
    )
      return { status: 400, code: 'invalid_json' };
    if (notObject) return { status: 400, code: 'invalid_body' };
    const byKey = new Map(list.map((x) => [x.key, x.value.decoded]));
    for (const f of FIELDS) {
      const decoded = byKey.get(f.name);
      if (decoded === undefined ? f.required : !isValid(decoded, f.spec))
        return { status: 400, code: 'invalid_body' };
    }
    if (list.some((x) => !KNOWN.has(x.key))) return { status: 400, code: 'invalid_body' };
    const value = (name: string) => byKey.get(name);
    const name = value('name');
    const categoryId = value('categoryId');
    const status = value('status');
    return {
      status: 201,
      pet: {
        name: name?.kind === 'string' ? name.value : '',
        categoryId: categoryId?.kind === 'integer' ? categoryId.value : 0n,
        ...(status?.kind === 'string' ? { status: status.value } : {}),
      },
    };
  })();
  return { bytes, outcome, steps };
}

/** About half valid NewPets, the rest with one to three mutations. */
export const bodyCase: fc.Arbitrary<BodyCase> = fc
  .tuple(
    validMembers,
    fc.oneof(
      { weight: 4, arbitrary: fc.constant<Mutation[]>([]) },
      { weight: 5, arbitrary: fc.array(mutation, { minLength: 1, maxLength: 3 }) },
    ),
    whitespace,
  )
  .map(([members, mutations, ws]) => build(members, mutations, ws));

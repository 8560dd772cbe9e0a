import { execFile } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type TestServer, useServer } from '../helpers/test-server.js';
import type { CalledPet, CallsInput, CallsResult } from './generated-clients/calls.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FIXTURES = fileURLToPath(new URL('generated-clients/', import.meta.url));
/** Where the commands of docs/client.md write, relative to the folder they run in. */
const OUT = join('src', 'petstore');
/** The address docs/client.md writes; the test puts its server's in its place. */
const DOCS_ADDRESS = 'http://127.0.0.1:8080';
/**
 * One generation or run of the calls: a few seconds each on a quiet machine, far more on
 * a loaded one. Past this the step's process is killed and the test fails instead of hanging.
 */
const STEP_TIMEOUT_MS = 120_000;
const INT64_MAX = '9223372036854775807';

/** The generators of docs/client.md, by the package `npx` names there, and the file it runs. */
const BINARIES: Record<string, string> = {
  'openapi-typescript': 'openapi-typescript/bin/cli.js',
  '@hey-api/openapi-ts': '@hey-api/openapi-ts/bin/run.js',
  orval: 'orval/dist/bin/orval.mjs',
};

interface Generator {
  /** The `npx` package of its command in docs/client.md. */
  name: string;
  /** The fixture beside this file that makes the calls through its code. */
  calls: string;
  /** The generated file that declares getPet, which must carry `@deprecated`. */
  getPetFile: string;
  /** What names getPet in that file, after its doc comment. */
  getPet: string;
}

const GENERATORS: Generator[] = [
  {
    name: 'openapi-typescript',
    calls: 'openapi-typescript-calls.ts',
    getPetFile: 'openapi.ts',
    getPet: 'get: operations["getPet"]',
  },
  {
    name: '@hey-api/openapi-ts',
    calls: 'hey-api-calls.ts',
    getPetFile: 'hey-api/sdk.gen.ts',
    getPet: 'export const getPet',
  },
  {
    name: 'orval',
    calls: 'orval-calls.ts',
    getPetFile: 'orval/pets.ts',
    getPet: 'export const getPet',
  },
];

/** The section of docs/client.md that says how to generate a client. */
function guide(): { commands: string[]; orvalConfig: string } {
  const text = readFileSync(join(ROOT, 'docs', 'client.md'), 'utf8');
  const start = text.indexOf('## Generating a client of your own');
  if (start < 0) throw new Error('docs/client.md has no ## Generating a client of your own');
  const section = text.slice(start);
  const shell = /```sh\n([^]*?)```/.exec(section)?.[1];
  const orvalConfig = /```js\n([^]*?)```/.exec(section)?.[1];
  if (shell === undefined || orvalConfig === undefined) {
    throw new Error('docs/client.md: the section needs a sh block of commands and a js block');
  }
  const commands = shell.split('\n').filter((line) => line.startsWith('npx '));
  return { commands, orvalConfig };
}

/** Runs a Node script in `cwd`, bounded in time; resolves to what it printed. */
async function node(args: string[], cwd: string): Promise<string> {
  try {
    const { stdout, stderr } = await run(process.execPath, args, {
      cwd,
      timeout: STEP_TIMEOUT_MS,
      killSignal: 'SIGKILL',
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
    });
    return stdout + stderr;
  } catch (error) {
    const failed = error as Error & { stdout?: string; stderr?: string };
    throw new Error(`${failed.message}\n${failed.stdout ?? ''}${failed.stderr ?? ''}`);
  }
}

/**
 * The command of docs/client.md for `generator`, run in `dir` against the test's server, through
 * the pinned package in node_modules (what `npx` runs in this repository).
 */
async function generate(generator: Generator, dir: string, address: string): Promise<string> {
  const { commands, orvalConfig } = guide();
  const command = commands.find((line) => line.split(/\s+/)[1] === generator.name);
  if (command === undefined) throw new Error(`docs/client.md has no npx ${generator.name} line`);
  const binary = BINARIES[generator.name];
  if (binary === undefined) throw new Error(`no binary known for ${generator.name}`);
  const args = command.replaceAll(DOCS_ADDRESS, address).split(/\s+/).slice(2);
  if (generator.name === 'orval') {
    writeFileSync(join(dir, 'orval.config.mjs'), orvalConfig.replaceAll(DOCS_ADDRESS, address));
  }
  return node([join(ROOT, 'node_modules', binary), ...args], dir);
}

/** The standard library's declarations (ES2022, DOM), parsed once for the three compiles. */
const libraryFiles = new Map<string, ts.SourceFile>();

/**
 * Compiles the generated code and the calls beside it to JavaScript, with the strict settings of
 * packages/client: DOM types and no Node ones, since these clients run in browsers too. As
 * `tsc -p tsconfig.json` would, in this process: a tsc of its own for each generator parsed the
 * same DOM and ES2022 declarations three times.
 */
function compile(dir: string): void {
  writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n');
  const compilerOptions = {
    target: 'ES2022',
    lib: ['ES2022', 'DOM', 'DOM.Iterable'],
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    noUncheckedIndexedAccess: true,
    noImplicitOverride: true,
    noFallthroughCasesInSwitch: true,
    isolatedModules: true,
    verbatimModuleSyntax: true,
    skipLibCheck: true,
    types: [],
    rootDir: OUT,
    outDir: 'out',
  };
  const configFile = join(dir, 'tsconfig.json');
  writeFileSync(configFile, JSON.stringify({ compilerOptions, include: [`${OUT}/**/*.ts`] }));
  const configErrors: ts.Diagnostic[] = [];
  const parsed = ts.getParsedCommandLineOfConfigFile(
    configFile,
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (error) => configErrors.push(error) },
  );
  const host = ts.createCompilerHost(parsed?.options ?? {});
  if (parsed === undefined) throw new Error(ts.formatDiagnostics(configErrors, host));
  const libraryDir = dirname(ts.getDefaultLibFilePath(parsed.options));
  const readSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, ...rest) => {
    if (dirname(fileName) !== libraryDir) return readSourceFile(fileName, ...rest);
    const kept = libraryFiles.get(fileName) ?? readSourceFile(fileName, ...rest);
    if (kept !== undefined) libraryFiles.set(fileName, kept);
    return kept;
  };
  const program = ts.createProgram({
    rootNames: parsed.fileNames,
    options: parsed.options,
    host,
    configFileParsingDiagnostics: parsed.errors,
  });
  const emitted = program.emit();
  const diagnostics = [...ts.getPreEmitDiagnostics(program), ...emitted.diagnostics];
  if (diagnostics.length > 0) throw new Error(ts.formatDiagnostics(diagnostics, host));
}

/** Runs the compiled calls in a Node process of their own, as a consumer of the client would. */
async function callThrough(dir: string, calls: string, input: CallsInput): Promise<CallsResult> {
  const module = pathToFileURL(join(dir, 'out', calls.replace(/\.ts$/, '.js'))).href;
  const script = `const { calls } = await import(process.argv[1]);
console.log(JSON.stringify(await calls(JSON.parse(process.argv[2]))));`;
  const printed = await node(
    ['--input-type=module', '-e', script, module, JSON.stringify(input)],
    dir,
  );
  return JSON.parse(printed) as CallsResult;
}

function expectPetCreated(pet: CalledPet, input: CallsInput): void {
  expect(pet).toEqual({
    id: expect.any(Number),
    name: input.name,
    categoryId: input.categoryId,
    status: 'available',
  });
  expect(Number.isSafeInteger(pet.id) && pet.id >= 1).toBe(true);
}

const server = useServer({ sqliteFile: true });
let workspace = '';
let bigPetId = 0;

beforeAll(async () => {
  workspace = mkdtempSync(join(tmpdir(), 'petstore-generated-clients-'));
  const s = server();
  const { key } = await s.createKey('pro');
  // Sent as text: the largest int64, which a JavaScript number cannot hold.
  const big = await call(s, 'POST', '/v1/pets', {
    key,
    rawBody: `{"name":"Big","categoryId":${INT64_MAX}}`,
    headers: { 'content-type': 'application/json' },
  });
  expect(big.status).toBe(201);
  expect(big.text).toContain(`"categoryId":${INT64_MAX}`);
  bigPetId = (big.body as { id: number }).id;
});

afterAll(() => {
  if (workspace !== '') rmSync(workspace, { recursive: true, force: true });
});

function inputFor(s: TestServer, generator: Generator, apiKey: string): CallsInput {
  return {
    baseUrl: `${s.url}/v1`,
    apiKey,
    name: `Made by ${generator.name}`,
    categoryId: 7,
    idempotencyKey: `generated-${generator.calls.replace(/\W/g, '-')}`,
    pageLimit: 1,
    bigPetId,
    missingId: 9_007_199_254_740_991,
  };
}

describe('clients generated from /v1/openapi.json as docs/client.md says', () => {
  it('serves the document the generators read', async () => {
    const res = await call(server(), 'GET', '/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ openapi: '3.1.0' });
  });

  it.each(GENERATORS)(
    '$name: generates without warnings, compiles strictly, and calls the service',
    async (generator) => {
      const s = server();
      const dir = join(workspace, generator.name.replace(/\W/g, '-'));
      mkdirSync(join(dir, OUT), { recursive: true });

      const printed = await generate(generator, dir, s.url);
      expect(printed).not.toMatch(/warn|⚠/i);
      const getPetFile = readFileSync(join(dir, OUT, generator.getPetFile), 'utf8');
      const getPet = getPetFile.indexOf(generator.getPet);
      expect(getPet, `${generator.getPetFile} declares getPet`).toBeGreaterThan(0);
      const comment = getPetFile.slice(getPetFile.lastIndexOf('/**', getPet), getPet);
      expect(comment, 'getPet is marked deprecated').toContain('@deprecated');

      for (const file of ['calls.ts', generator.calls]) {
        copyFileSync(join(FIXTURES, file), join(dir, OUT, file));
      }
      // openapi-fetch (openapi-typescript's client) from this repository's installed packages.
      symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
      compile(dir);

      const { key } = await s.createKey('pro');
      const input = inputFor(s, generator, key);
      const result = await callThrough(dir, generator.calls, input);

      // createPet, and again with the same Idempotency-Key: the first answer, replayed.
      expect(result.created.status).toBe(201);
      expectPetCreated(result.created.pet, input);
      expect(result.replayed).toEqual({
        status: 201,
        pet: result.created.pet,
        replayedHeader: 'true',
      });
      // listPets, one pet a page, following Link rel="next" to the end: every pet once, in order.
      const walked = result.pages.flat();
      expect(result.pages.length).toBeGreaterThanOrEqual(2);
      expect(result.pages.every((page) => page.length === input.pageLimit)).toBe(true);
      const ids = walked.map((pet) => pet.id);
      expect(ids).toEqual([...new Set(ids)].sort((a, b) => a - b));
      expect(walked).toContainEqual(result.created.pet);
      // getPet (deprecated): the pet, with the Deprecation header.
      expect(result.got).toEqual({
        status: 200,
        pet: result.created.pet,
        deprecation: expect.stringMatching(/^@\d+$/),
      });
      // int64: JSON.parse gives the nearest double, as docs/client.md warns.
      expect(result.big).toMatchObject({ id: bigPetId, name: 'Big' });
      expect(result.big.categoryId).toBe(Number(INT64_MAX));
      expect(BigInt(result.big.categoryId)).not.toBe(BigInt(INT64_MAX));
      // Errors, typed by the generated code: 404 and 401 with their codes.
      expect(result.notFound).toEqual({ status: 404, code: 'not_found' });
      expect(result.unauthorized).toEqual({ status: 401, code: 'unauthorized' });
    },
    // Three steps, each bounded by STEP_TIMEOUT_MS, and the requests between them.
    4 * STEP_TIMEOUT_MS,
  );
});

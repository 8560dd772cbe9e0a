import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEPLOY_DIR } from './manifests.js';

/** One instruction of deploy/Containerfile that the inputs test acts on. */
export type Instruction =
  | { kind: 'WORKDIR'; path: string }
  | { kind: 'ENV'; values: Record<string, string> }
  | { kind: 'ARG'; name: string; value: string | undefined }
  | { kind: 'COPY'; from: string | undefined; sources: string[]; destination: string }
  | { kind: 'RUN'; command: string }
  | { kind: 'CMD'; command: string[] }
  | { kind: 'HEALTHCHECK'; command: string[] }
  | { kind: 'OTHER'; keyword: string };

export interface Stage {
  readonly name: string;
  readonly instructions: Instruction[];
}

/** `KEY=value` pairs, values optionally double-quoted (the forms the Containerfile uses). */
function keyValues(text: string): Record<string, string> {
  const values: Record<string, string> = {};
  for (const match of text.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("(?:[^"\\]|\\.)*"|\S*)/g)) {
    const raw = match[2] ?? '';
    values[match[1] ?? ''] = raw.startsWith('"') ? (JSON.parse(raw) as string) : raw;
  }
  return values;
}

/**
 * The stages of a Containerfile, each with its instructions in order: continuation lines joined,
 * comments dropped. Only the forms deploy/Containerfile uses are understood; any other form of
 * COPY, RUN or CMD throws, so that a change the test cannot follow is noticed rather than skipped.
 */
export function parseContainerfile(
  text = readFileSync(join(DEPLOY_DIR, 'Containerfile'), 'utf8'),
): Stage[] {
  const lines = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const stages: Stage[] = [];
  for (const line of lines) {
    const keyword = (/^\S+/.exec(line)?.[0] ?? '').toUpperCase();
    const rest = line.slice(keyword.length).trim();
    if (keyword === 'FROM') {
      stages.push({
        name: /\sAS\s+(\S+)$/i.exec(rest)?.[1] ?? String(stages.length),
        instructions: [],
      });
      continue;
    }
    const stage = stages.at(-1);
    if (stage === undefined) {
      if (keyword !== 'ARG') throw new Error(`before the first FROM: ${line}`);
      continue; // the base image's ARG: the test runs on this machine's Node instead
    }
    const add = (instruction: Instruction) => stage.instructions.push(instruction);
    switch (keyword) {
      case 'WORKDIR':
        add({ kind: 'WORKDIR', path: rest });
        break;
      case 'ENV':
        add({ kind: 'ENV', values: keyValues(rest) });
        break;
      case 'ARG': {
        const [name = '', value] = rest.split('=', 2);
        add({ kind: 'ARG', name, value });
        break;
      }
      case 'COPY': {
        const words = rest.split(/\s+/);
        const from = words[0]?.startsWith('--from=') ? words.shift()?.slice(7) : undefined;
        if (words.some((word) => word.startsWith('--')) || words.length < 2) {
          throw new Error(`a COPY form the inputs test does not know: ${line}`);
        }
        add({ kind: 'COPY', from, sources: words.slice(0, -1), destination: words.at(-1) ?? '' });
        break;
      }
      case 'RUN':
        if (rest.startsWith('[')) throw new Error(`RUN in exec form is not understood: ${line}`);
        add({ kind: 'RUN', command: rest });
        break;
      case 'CMD':
        add({ kind: 'CMD', command: JSON.parse(rest) as string[] });
        break;
      case 'HEALTHCHECK': {
        const exec = /\bCMD\s+(\[.*\])$/.exec(rest)?.[1];
        if (exec === undefined) throw new Error(`HEALTHCHECK not in exec form: ${line}`);
        add({ kind: 'HEALTHCHECK', command: JSON.parse(exec) as string[] });
        break;
      }
      default:
        add({ kind: 'OTHER', keyword });
    }
  }
  return stages;
}

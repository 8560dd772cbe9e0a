import { performance } from 'node:perf_hooks';
import type { NewPet, PetStatus } from '../../domain/pets/pet.js';
import { type Command, parseCommandArgs, positiveInteger, UsageError } from '../command.js';

// Split from strings so the lists stay readable after formatting.
const NAMES = (
  'Bella Max Luna Charlie Lucy Cooper Daisy Milo Zoë Rocky Nala Oliver Coco Leo Ruby Bear Rosie ' +
  'Teddy Lola Finn Pepper Oscar Willow Toby Hazel Jasper Maple Ziggy Olive Bruno Sadie Duke ' +
  'Mochi Biscuit Nina Otis Pixel Sasha Winston Juniper'
).split(' ');
const ADJECTIVES =
  'Little Brave Sleepy Happy Fluffy Lucky Gentle Curious Speedy Shy Old Tiny'.split(' ');
/** Mostly available, as in a real shelter; `undefined` stands for pets sent without a status. */
const STATUS_CYCLE: readonly (PetStatus | undefined)[] = [
  'available',
  'pending',
  'available',
  'sold',
  'available',
  undefined,
];
const CATEGORY_IDS = [1n, 2n, 3n, 4n, 5n];
const BATCH_SIZE = 1_000;
const MAX_COUNT = 1_000_000;

function pick<T>(list: readonly T[], i: number): T {
  return list[i % list.length] as T;
}

/**
 * The i-th sample pet, the same on every run. "Sleepy Luna", then "Sleepy Luna 2" once every
 * name and adjective pair is used.
 */
export function samplePet(i: number): NewPet {
  const pairs = NAMES.length * ADJECTIVES.length;
  const round = Math.floor(i / pairs);
  const base = `${pick(ADJECTIVES, Math.floor(i / NAMES.length))} ${pick(NAMES, i)}`;
  // Shifting by the round of names keeps a name from always landing on the same category or status.
  const shifted = i + Math.floor(i / NAMES.length);
  const pet: NewPet = {
    name: round === 0 ? base : `${base} ${round + 1}`,
    categoryId: pick(CATEGORY_IDS, shifted),
  };
  const status = pick(STATUS_CYCLE, shifted);
  if (status !== undefined) pet.status = status;
  return pet;
}

export const seed: Command = {
  name: 'seed',
  summary: 'insert N sample pets, for demos and benchmarks',
  help: [
    'Usage: petstore seed --count N',
    '',
    'Options:',
    `  --count N   how many pets to insert, 1 to ${MAX_COUNT.toLocaleString('en-US')}`,
    '',
    `Pets go in ${BATCH_SIZE.toLocaleString('en-US')} per transaction, with names like "Sleepy Luna",`,
    'categories 1 to 5, and statuses available, pending, sold or none.',
  ].join('\n'),
  migrateOnOpen: true,
  prepare(args) {
    const { values } = parseCommandArgs(args, { count: { type: 'string' } });
    if (values.count === undefined) throw new UsageError('--count N is required');
    const count = positiveInteger('--count', values.count, MAX_COUNT);

    return async ({ services, stderr }) => {
      const started = performance.now();
      let inserted = 0;
      try {
        while (inserted < count) {
          const size = Math.min(BATCH_SIZE, count - inserted);
          const batch = Array.from({ length: size }, (_, i) => samplePet(inserted + i));
          inserted += await services.storage.pets.insertMany(batch);
        }
      } catch (error) {
        // Earlier batches are committed; say so, or the operator may seed the same pets twice.
        stderr.write(`Inserted ${inserted} of ${count} pets before an error stopped the seed.\n`);
        throw error;
      }
      // Right after a bulk load the planner knows nothing of the new rows: tell it now.
      await services.storage.analyze();
      const seconds = (performance.now() - started) / 1000;
      stderr.write(
        `Inserted ${inserted} pets in ${seconds.toFixed(2)} s ` +
          `(${Math.round(inserted / Math.max(seconds, 0.001))} pets/s).\n`,
      );
    };
  },
};

import { parseArgs } from 'node:util';
import { PET_STATUSES, type NewPet } from '../../domain/pets/pet.js';
import { type Command, positiveInteger, UsageError } from '../cli-context.js';

const NAMES = [
  'Bella',
  'Max',
  'Luna',
  'Charlie',
  'Lucy',
  'Cooper',
  'Daisy',
  'Milo',
  'Zoë',
  'Rocky',
  'Nala',
  'Oliver',
  'Coco',
  'Leo',
  'Ruby',
  'Bear',
  'Rosie',
  'Teddy',
  'Lola',
  'Finn',
  'Pepper',
  'Oscar',
  'Willow',
  'Toby',
  'Hazel',
  'Jasper',
  'Maple',
  'Ziggy',
  'Olive',
  'Bruno',
];
const BATCH = 1_000;

/** Varied but deterministic sample pets; every fifth has no status, as clients may send. */
export function samplePet(i: number): NewPet {
  const name = `${NAMES[i % NAMES.length]} ${Math.floor(i / NAMES.length) + 1}`;
  const pet: NewPet = { name, categoryId: BigInt(1 + (i % 7)) };
  if (i % 5 !== 4) pet.status = PET_STATUSES[i % PET_STATUSES.length];
  return pet;
}

export const seed: Command = {
  name: 'seed',
  summary: 'insert N sample pets (for demos and benchmarks)',
  usage: 'petstore seed --count N',
  async run(args, context) {
    const { values } = parseArgs({ args, strict: true, options: { count: { type: 'string' } } });
    if (values.count === undefined) throw new UsageError('seed needs --count N');
    const count = positiveInteger('--count', values.count, 1_000_000);
    const storage = await context.storage();
    const started = Date.now();
    for (let done = 0; done < count; done += BATCH) {
      const batch = Array.from({ length: Math.min(BATCH, count - done) }, (_, i) =>
        samplePet(done + i),
      );
      await storage.pets.insertMany(batch);
    }
    context.stderr.write(`Inserted ${count} pets in ${Date.now() - started} ms.\n`);
    return 0;
  },
};

export const migrate: Command = {
  name: 'migrate',
  summary: 'apply pending database migrations',
  usage: 'petstore migrate',
  async run(args, context) {
    parseArgs({ args, strict: true, options: {} });
    const done = await (await context.storage()).migrate();
    context.stderr.write(done.length === 0 ? 'Database is up to date.\n' : `${done.join('\n')}\n`);
    return 0;
  },
};

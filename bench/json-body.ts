/**
 * Micro-benchmark of reading a create body: the strict parser on the text, and the whole of
 * parseJsonBody on the bytes (fatal UTF-8 decode + parse), against JSON.parse in the same run.
 * Run: npm run bench:json-body
 */
import { performance } from 'node:perf_hooks';
import { parseJsonBody } from '../src/http/plugins/json-body.plugin.js';
import { parseStrictJson } from '../src/http/validation/strict-json.js';

const BODIES = {
  'create body': '{"name":"Rex the dog","categoryId":3,"status":"available"}',
  'create body, int64 categoryId':
    '{"name":"Max","categoryId":9223372036854775807,"status":"sold"}',
};
const CALLS = 1_000_000;
const ROUNDS = 9;

function microsPerCall(run: () => unknown): number {
  const started = performance.now();
  for (let i = 0; i < CALLS; i++) run();
  return ((performance.now() - started) * 1000) / CALLS;
}

for (const [name, text] of Object.entries(BODIES)) {
  const bytes = Buffer.from(text);
  const ways: Record<string, () => unknown> = {
    'JSON.parse(text)': () => JSON.parse(text),
    'JSON.parse(bytes.toString())': () => JSON.parse(bytes.toString('utf8')),
    'parseStrictJson(text)': () => parseStrictJson(text),
    'parseJsonBody(bytes)': () => parseJsonBody(bytes),
  };
  const times = new Map<string, number[]>(Object.keys(ways).map((way) => [way, []]));
  for (const run of Object.values(ways)) for (let i = 0; i < 200_000; i++) run(); // warm up
  // Rounds interleave the ways, so a busy machine slows them alike.
  for (let round = 0; round < ROUNDS; round++) {
    for (const [way, run] of Object.entries(ways)) times.get(way)?.push(microsPerCall(run));
  }
  console.log(`${name} (${bytes.length} bytes), median of ${ROUNDS} rounds:`);
  for (const [way, micros] of times) {
    const median = [...micros].sort((a, b) => a - b)[Math.floor(ROUNDS / 2)] ?? NaN;
    console.log(`  ${way.padEnd(30)} ${median.toFixed(3)} µs`);
  }
}

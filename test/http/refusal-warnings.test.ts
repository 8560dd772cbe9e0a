import type { FastifyBaseLogger } from 'fastify';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/domain/clock.js';
import { refusalWarnings } from '../../src/http/server/api-server.js';

function recordingLog(): { log: FastifyBaseLogger; warnings: unknown[] } {
  const warnings: unknown[] = [];
  const log = { warn: (fields: unknown) => void warnings.push(fields) } as FastifyBaseLogger;
  return { log, warnings };
}

describe('warnings of refused connections', () => {
  it('come at most once a minute per cap, counting the refusals since the last one', () => {
    const clock = new ManualClock(1_000_000);
    const warn = refusalWarnings(clock);
    const { log, warnings } = recordingLog();

    warn(log, 'total', '10.0.0.1');
    for (let i = 0; i < 5; i++) warn(log, 'total', '10.0.0.2');
    warn(log, 'per_address', '10.0.0.3');
    clock.advance(59_999);
    warn(log, 'total', '10.0.0.4');
    expect(warnings).toEqual([
      { cap: 'total', address: '10.0.0.1', refused: 1 },
      { cap: 'per_address', address: '10.0.0.3', refused: 1 },
    ]);

    clock.advance(1);
    warn(log, 'total', '10.0.0.5');
    expect(warnings.at(-1)).toEqual({ cap: 'total', address: '10.0.0.5', refused: 7 });
    expect(warnings).toHaveLength(3);
  });
});

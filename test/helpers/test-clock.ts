import type { Clock } from '../../src/domain/clock.js';

/** A clock tests move by hand, so no test sleeps to wait for time to pass. */
export class TestClock implements Clock {
  constructor(private current: number = Date.UTC(2026, 10, 22, 12, 0, 0)) {}

  now(): number {
    return this.current;
  }

  set(epochMs: number): void {
    this.current = epochMs;
  }

  advance(ms: number): void {
    this.current += ms;
  }
}

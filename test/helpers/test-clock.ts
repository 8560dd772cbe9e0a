import { ManualClock } from '../../src/domain/clock.js';

/** The manual clock tests use, starting at a fixed moment unless told otherwise. */
export class TestClock extends ManualClock {
  constructor(start: number = Date.UTC(2026, 10, 22, 12, 0, 0)) {
    super(start);
  }
}

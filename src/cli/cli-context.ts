import type { Config } from '../config/config.js';
import type { Storage } from '../domain/ports.js';

export interface Output {
  write(text: string): unknown;
}

export interface CliContext {
  config: Config;
  stdout: Output;
  stderr: Output;
  /** Opens storage for the command; the runner closes it. */
  storage(): Promise<Storage>;
}

/** A mistake in how the command was called: one line of explanation, exit status 1. */
export class UsageError extends Error {
  override name = 'UsageError';
}

export function positiveInteger(name: string, value: string | undefined, max: number): number {
  if (value === undefined || !/^\d+$/.test(value) || Number(value) < 1 || Number(value) > max) {
    throw new UsageError(
      `${name} must be an integer from 1 to ${max} (got ${JSON.stringify(value ?? '')})`,
    );
  }
  return Number(value);
}

export interface Command {
  /** e.g. "keys create" */
  name: string;
  summary: string;
  usage: string;
  run(args: string[], context: CliContext): Promise<number>;
}

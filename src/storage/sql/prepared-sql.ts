import type { Compilable } from 'kysely';

/**
 * A query compiled once: its SQL text, and for each of its placeholders the name of the parameter
 * that fills it (or, for a value the query itself fixes, that value).
 */
export interface CompiledQueryPlan<P> {
  readonly sql: string;
  readonly slots: ReadonlyArray<{ name: keyof P } | { value: unknown }>;
}

const SENTINEL = '\u0000param:';

/**
 * Compiles `build` once with a stand-in for every parameter, so a driver can prepare its SQL once
 * and bind real values per call in the right order (Kysely's placeholders are positional).
 */
export function compileOnce<P extends object>(
  build: (params: P) => Compilable,
  names: ReadonlyArray<keyof P>,
): CompiledQueryPlan<P> {
  const standIns = Object.fromEntries(
    names.map((name) => [name, `${SENTINEL}${String(name)}`]),
  ) as unknown as P;
  const compiled = build(standIns).compile();
  const slots = compiled.parameters.map((parameter) =>
    typeof parameter === 'string' && parameter.startsWith(SENTINEL)
      ? { name: parameter.slice(SENTINEL.length) as keyof P }
      : { value: parameter },
  );
  const bound = new Set(slots.flatMap((slot) => ('name' in slot ? [slot.name] : [])));
  for (const name of names) {
    if (!bound.has(name)) throw new Error(`parameter ${String(name)} does not reach the SQL`);
  }
  return { sql: compiled.sql, slots };
}

/** The values of `params` in the order the plan's placeholders take them. */
export function bind<P>(plan: CompiledQueryPlan<P>, params: P): unknown[] {
  return plan.slots.map((slot) => ('name' in slot ? params[slot.name] : slot.value));
}

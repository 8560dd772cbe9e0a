// @ts-check
/**
 * Queries compiled once, bound per call. Plain JavaScript, like the SQLite commit worker that binds
 * with it too: a worker thread runs its files as they are, from the sources (tests) and from dist/.
 */

const SENTINEL = '\u0000param:';

/**
 * A query compiled once: its SQL text, and for each of its placeholders the name of the parameter
 * that fills it (or, for a value the query itself fixes, that value).
 * @template P
 * @typedef {{ readonly sql: string, readonly slots: ReadonlyArray<{ name: keyof P } | { value: unknown }> }} CompiledQueryPlan
 */

/**
 * Compiles `build` once with a stand-in for every parameter, so a driver can prepare its SQL once
 * and bind real values per call in the right order (Kysely's placeholders are positional).
 * @template {object} P
 * @param {(params: P) => import('kysely').Compilable} build
 * @param {ReadonlyArray<keyof P>} names
 * @returns {CompiledQueryPlan<P>}
 */
export function compileOnce(build, names) {
  const standIns = /** @type {P} */ (
    /** @type {unknown} */ (
      Object.fromEntries(names.map((name) => [name, `${SENTINEL}${String(name)}`]))
    )
  );
  const compiled = build(standIns).compile();
  /** @type {Array<{ name: keyof P } | { value: unknown }>} */
  const slots = compiled.parameters.map((parameter) =>
    typeof parameter === 'string' && parameter.startsWith(SENTINEL)
      ? { name: /** @type {keyof P} */ (parameter.slice(SENTINEL.length)) }
      : { value: parameter },
  );
  const bound = new Set(slots.flatMap((slot) => ('name' in slot ? [slot.name] : [])));
  for (const name of names) {
    if (!bound.has(name)) throw new Error(`parameter ${String(name)} does not reach the SQL`);
  }
  return { sql: compiled.sql, slots };
}

/**
 * The values of `params` in the order the plan's placeholders take them.
 * @template P
 * @param {CompiledQueryPlan<P>} plan
 * @param {P} params
 * @returns {unknown[]}
 */
export function bind(plan, params) {
  return plan.slots.map((slot) => ('name' in slot ? params[slot.name] : slot.value));
}

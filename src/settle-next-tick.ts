/**
 * Gives process.nextTick's tick objects their final shape before the server loads, so that V8
 * optimizes nextTick with stores it can inline.
 *
 * Node builds each tick as an object literal with computed (symbol) keys, and every answered
 * request schedules seven of them. Which code V8's optimizing compiler makes of that literal
 * depends on the shapes it saw first: when the shape was still widening as the server started
 * (callbacks of another kind, a first call with arguments), each tick goes through the runtime
 * instead (Runtime_DefineKeyedOwnPropertyInLiteral). Which start ends up which way depends on
 * nothing we write: the same server measured 133,000 instructions a listPets answer one way and
 * 171,000 the other (callgrind, bench finding 15), and a few more objects allocated at start flipped
 * it. Calls with every kind of callback and with and without arguments settle the shape first;
 * then enough plain calls for the compiler to take the function: 140,000 instructions, whatever
 * was allocated around it. About 2 ms, once.
 */
export async function settleNextTick(): Promise<void> {
  class Kind {
    method(): void {}
  }
  const kinds: Array<(...args: unknown[]) => unknown> = [
    () => undefined,
    function plain() {},
    (() => undefined).bind(null),
    new Kind().method,
    async () => undefined,
  ];
  for (const kind of kinds) {
    process.nextTick(kind);
    process.nextTick(kind, 1);
    process.nextTick(kind, 1, 2);
  }
  await new Promise<void>((resolve) => {
    let left = 20_000;
    const tick = () => (--left > 0 ? process.nextTick(tick) : resolve());
    tick();
  });
}

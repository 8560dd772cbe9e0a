/**
 * How npm run bench and npm run soak run as commands: options parsed first (exit 2 with the usage
 * when they are wrong), then the run (exit 1 on failure, unless a signal is stopping it: the
 * signal handler reports that and exits itself).
 */
export function runCommand<O>(
  name: string,
  usage: string,
  parse: (argv: string[]) => O,
  main: (options: O) => Promise<void>,
  stopping: () => boolean,
): void {
  const message = (error: unknown) => (error instanceof Error ? error.message : String(error));
  let options: O;
  try {
    options = parse(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`${name}: ${message(error)}\n\n${usage}`);
    process.exit(2);
  }
  main(options).catch((error: unknown) => {
    if (stopping()) return;
    process.stderr.write(`${name}: FAILED: ${message(error)}\n`);
    process.exit(1);
  });
}

import { checkEnvironmentFromProcess } from '../config/config.js';
import { runCli } from './run-cli.js';

// `petstore keys list | head -1` closes stdout early; that is the reader's choice, not a failure.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
});

/** How long the process may take to end once the command and everything it awaited are done. */
const EXIT_GRACE_MS = 2_000;

process.exitCode = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: checkEnvironmentFromProcess(),
  stdin: process.stdin,
});

// The command has closed what it opened. A connection that is still ending (a Redis Cluster node
// mid-failover) must not keep an operator's shell or script waiting on a command that is done.
setTimeout(() => {
  process.stderr.write(
    `petstore: a connection was still open ${EXIT_GRACE_MS / 1000} s after the command ended; exiting\n`,
  );
  process.exit();
}, EXIT_GRACE_MS).unref();

import { checkEnvironmentFromProcess } from '../config/config.js';
import { runCli } from './run-cli.js';

// `petstore keys list | head -1` closes stdout early; that is the reader's choice, not a failure.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
});

process.exitCode = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: checkEnvironmentFromProcess(),
  stdin: process.stdin,
});

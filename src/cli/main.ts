import { runCli } from './run.js';

/** The `sibyl` process: one command, its answer on stdout/stderr, its exit code. */
runCli(process.argv.slice(2), {
  env: process.env,
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  terminal: process.stdout.isTTY === true,
}).then((code) => {
  if (code >= 0) process.exitCode = code;
});

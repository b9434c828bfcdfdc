// `node --import ./scripts/cli-startup/register.js`: counts the modules loaded (hooks.js) when
// CLI_STARTUP_LOG is set, and writes the process's CPU time (user + system, µs) at exit.
import { appendFileSync } from 'node:fs';
import { register } from 'node:module';

const log = process.env.CLI_STARTUP_LOG;
if (log && process.env.CLI_STARTUP_COUNT === '1') register('./hooks.js', import.meta.url);
if (log) {
  process.on('exit', () => {
    const { user, system } = process.cpuUsage();
    appendFileSync(log, `cpu ${user + system}\n`);
  });
}

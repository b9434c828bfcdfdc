// What an operator command costs before it answers: the project's modules it loads (dist/), the
// packages it loads, and its CPU time (user + system). Measured after `npm run build`:
//   node scripts/cli-startup.js [runs] -- accounts list
// on a scratch embedded database (SIBYL_DATA_DIR in a temporary directory, migrated first). For a
// command whose implementation is `<room>/cli.js`, also the modules loaded before it.
// docs/performance.md#command-start-up records the figures (the rule: docs/architecture.md#light-commands).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dash = process.argv.indexOf('--');
const runs = Number(process.argv[2] && process.argv[2] !== '--' ? process.argv[2] : 5);
const command = dash === -1 ? ['accounts', 'list'] : process.argv.slice(dash + 1);
const scratch = mkdtempSync(join(tmpdir(), 'sibyl-cli-startup-'));
const env = { ...process.env, SIBYL_DATA_DIR: join(scratch, 'data'), DATABASE_URL: '', LOG_LEVEL: 'silent' };

function once(args, count) {
  const log = join(scratch, `run-${Math.random().toString(36).slice(2)}.log`);
  const result = spawnSync(
    process.execPath,
    ['--import', './scripts/cli-startup/register.js', 'bin/sibyl.js', ...args],
    {
      cwd: root,
      env: { ...env, CLI_STARTUP_LOG: log, CLI_STARTUP_COUNT: count ? '1' : '0' },
      encoding: 'utf8',
    },
  );
  if (result.status !== 0)
    throw new Error(`sibyl ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  const lines = readFileSync(log, 'utf8').trim().split('\n');
  const urls = lines.filter((line) => !line.startsWith('cpu '));
  const cpu = Number(lines.find((line) => line.startsWith('cpu '))?.slice(4));
  return {
    project: urls
      .filter((url) => url.startsWith(`file://${root}dist/`))
      .map((url) => url.slice(`file://${root}dist/`.length)),
    packages: new Set(
      urls
        .map((url) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1])
        .filter((name) => name !== undefined),
    ),
    cpuMs: cpu / 1000,
  };
}

try {
  once(['migrate'], false); // the scratch database, so that the measured runs only open it
  const counted = once(command, true);
  const cpu = [];
  for (let i = 0; i < runs; i++) cpu.push(once(command, false).cpuMs);
  cpu.sort((a, b) => a - b);
  const median = cpu[Math.floor(cpu.length / 2)];
  console.log(`sibyl ${command.join(' ')}`);
  console.log(`  project modules loaded: ${counted.project.length}`);
  // The modules loaded in order: those before the command's own implementation (`<room>/cli.js`,
  // loaded by its descriptor's `run`) are what every command pays to start.
  const own = counted.project.indexOf(`${command[0]}/cli.js`);
  if (own !== -1) console.log(`  of which before the command runs (${command[0]}/cli.js): ${own}`);
  console.log(`  packages loaded: ${counted.packages.size} (${[...counted.packages].sort().join(', ')})`);
  console.log(
    `  CPU (user+system), median of ${runs}: ${median.toFixed(0)} ms (${cpu.map((ms) => ms.toFixed(0)).join(', ')})`,
  );
  if (process.argv.includes('--list')) console.log(counted.project.sort().join('\n'));
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

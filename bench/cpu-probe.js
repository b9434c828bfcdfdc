// Loaded into the process under test by bench/evaluation.js (node --import): when it exits, writes
// the CPU it used (user and system microseconds, process.cpuUsage) to BENCH_CPU_FILE.
import { writeFileSync } from 'node:fs';

const file = process.env.BENCH_CPU_FILE;
if (file) {
  process.on('exit', () => {
    const { user, system } = process.cpuUsage();
    writeFileSync(file, `${user} ${system}\n`);
  });
}

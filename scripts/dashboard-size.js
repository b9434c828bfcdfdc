// Measures what the first load of /dashboard/ costs: every script the page loads (its entry and
// the modules it preloads), raw, gzip (level 9) and brotli (quality 11), as the server sends them
// precompressed. Fails above the budget of docs/dashboard.md: 250 KB of compressed JavaScript.
//
//   npm run dashboard:size
import { readFileSync } from 'node:fs';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const BUDGET_BYTES = 250 * 1024;
const dist = new URL('../dashboard/dist/', import.meta.url);
const page = readFileSync(new URL('index.html', dist), 'utf8');
const files = [...page.matchAll(/(?:src|href)="\/dashboard\/(assets\/[^"]+\.(?:js|css))"/g)].map((m) => m[1]);

const rows = files.map((file) => {
  const bytes = readFileSync(new URL(file, dist));
  return {
    file,
    raw: bytes.length,
    gzip: gzipSync(bytes, { level: 9 }).length,
    brotli: brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length,
  };
});
const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
for (const row of rows) {
  process.stdout.write(
    `${row.file.padEnd(36)} ${kb(row.raw).padStart(10)} raw ${kb(row.gzip).padStart(9)} gzip ${kb(row.brotli).padStart(9)} brotli\n`,
  );
}
const scripts = rows.filter((row) => row.file.endsWith('.js'));
const total = (key) => scripts.reduce((sum, row) => sum + row[key], 0);
process.stdout.write(
  `JavaScript of the first load: ${kb(total('raw'))} raw, ${kb(total('gzip'))} gzip, ${kb(total('brotli'))} brotli (budget ${kb(BUDGET_BYTES)} compressed)\n`,
);
if (scripts.length === 0)
  throw new Error('no script found in dashboard/dist/index.html: build the dashboard first');
if (total('gzip') > BUDGET_BYTES) {
  process.stderr.write('over budget\n');
  process.exit(1);
}

import { execFileSync } from 'node:child_process';
import { expect, it } from 'vitest';

it('the first load of /dashboard/ stays within 250 KB of compressed JavaScript (scripts/dashboard-size.js)', () => {
  const out = execFileSync(process.execPath, ['scripts/dashboard-size.js'], { encoding: 'utf8' });
  const match = /JavaScript of the first load: [\d.]+ KB raw, ([\d.]+) KB gzip, ([\d.]+) KB brotli/.exec(out);
  expect(match, out).not.toBeNull();
  expect(Number(match?.[1])).toBeLessThanOrEqual(250);
  expect(Number(match?.[2])).toBeLessThanOrEqual(Number(match?.[1]));
});

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// The benchmarks run against the built service (dist/); nothing else imports them, so a module
// they name that no longer exists would only show when someone runs `npm run bench`.
describe('bench/', () => {
  it('imports only modules the build produces', () => {
    const dir = new URL('../bench/', import.meta.url);
    const missing: string[] = [];
    let imports = 0;
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.js'))) {
      const text = readFileSync(new URL(file, dir), 'utf8');
      for (const [, path] of text.matchAll(/from '\.\.\/dist\/([^']+)\.js'/g)) {
        imports += 1;
        if (!existsSync(new URL(`../src/${path}.ts`, import.meta.url)))
          missing.push(`${file}: dist/${path}.js`);
      }
    }
    expect(imports).toBeGreaterThan(10);
    expect(missing).toEqual([]);
  });
});

#!/usr/bin/env node
// The `sibyl` command: runs the compiled CLI (built by `npm install` / `npm run build`).
import { existsSync } from 'node:fs';

const entry = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('sibyl: not built yet; run `npm run build` (npm install does it for you)\n');
  process.exit(1);
}
await import(entry.href);

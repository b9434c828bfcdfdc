// tsc compiles TypeScript only; the migrations are plain SQL read at run time from beside the code.
import { cpSync, rmSync } from 'node:fs';

// Replaced, not merged: a migration renamed or removed in src/ must not stay behind in dist/, where
// it would run as a migration of its own.
rmSync(new URL('../dist/db/migrations/', import.meta.url), { recursive: true, force: true });
cpSync(
  new URL('../src/db/migrations/', import.meta.url),
  new URL('../dist/db/migrations/', import.meta.url),
  {
    recursive: true,
  },
);

// The OpenAPI examples, recorded from real answers by scripts/openapi-examples.js.
cpSync(
  new URL('../src/http/openapi-examples.json', import.meta.url),
  new URL('../dist/http/openapi-examples.json', import.meta.url),
);
cpSync(
  new URL('../src/http/openapi-error-examples.json', import.meta.url),
  new URL('../dist/http/openapi-error-examples.json', import.meta.url),
);

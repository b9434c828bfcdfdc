import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeLlm, fakeSlotsEnv, startFakeLlm } from '../ai/fake-llm.js';
import { runCliOn } from '../helpers/cli.js';
import { createTestContext, type TestContext } from '../helpers/context.js';

/**
 * `sibyl ai evaluate` checks what it will write, and that it was told which models to pay for, before
 * it reads the set or asks anything: each refusal is a usage error naming the option (exit 2), no
 * provider is asked, and nothing is written (docs/ai.md#evaluation).
 */

const SOURCE = fileURLToPath(new URL('./sets/sibyl.jsonl', import.meta.url));

let fakes: FakeLlm[] = [];
let ctx: TestContext;
let env: Record<string, string>;
let dir: string;
let set: string;

beforeAll(async () => {
  fakes = await Promise.all(
    (['openai', 'anthropic', 'google', 'xai'] as const).map((kind) =>
      startFakeLlm(kind, () => ({
        answer: { outcomeIndex: 0, confidence: 0.9, reasoning: 'From the record.' },
      })),
    ),
  );
  // No tools: each model answers in one call, so the calls asked count the questions (2 × 4).
  env = fakeSlotsEnv(fakes, { AI_RETRIES: '0', AI_MAX_TOOL_CALLS: '0' });
  ctx = await createTestContext({ config: env });
  dir = await mkdtemp(join(tmpdir(), 'sibyl-evaluate-paths-'));
  set = join(dir, 'set.jsonl');
  await copyFile(SOURCE, set);
});

afterAll(async () => {
  await ctx?.close();
  for (const fake of fakes) await fake.close();
});

const asked = () => fakes.reduce((n, f) => n + f.server.requests.length, 0);

async function refused(args: string[], message: string) {
  const files = await readdir(dir, { recursive: true });
  const result = await runCliOn(ctx.database.db, ['ai', 'evaluate', ...args], env);
  expect(result.stderr, args.join(' ')).toContain(message);
  expect(result.status, args.join(' ')).toBe(2);
  expect(asked()).toBe(0);
  // Nothing written, no temporary file left; the set as it was.
  expect(await readdir(dir, { recursive: true })).toEqual(files);
  expect(await readFile(set, 'utf8')).toBe(await readFile(SOURCE, 'utf8'));
}

describe('sibyl ai evaluate refuses before asking anything', () => {
  it('without --models: it names the choices instead of spending on live models', async () => {
    await refused(
      [set, '--out', join(dir, 'r.json'), '--cache', join(dir, 'c.jsonl')],
      '--models is required: live (the four configured providers, paid by the operator) or sandbox (the deterministic sandbox models, free)',
    );
    await refused([set, '--models', 'cheap'], '--models takes live or sandbox: live (');
  });

  it('a --cache or --out that is the set, or --cache that is --out', async () => {
    const live = ['--models', 'live'];
    await refused(
      [set, ...live, '--cache', set, '--out', join(dir, 'r.json')],
      `--cache ${set} is the labelled set`,
    );
    await refused(
      [set, ...live, '--out', set, '--cache', join(dir, 'c.jsonl')],
      `--out ${set} is the labelled set`,
    );
    // The same file by another spelling.
    await refused(
      [set, ...live, '--out', join(dir, 'sub', '..', 'set.jsonl'), '--cache', join(dir, 'c.jsonl')],
      'is the labelled set',
    );
    const both = join(dir, 'same.json');
    await refused([set, ...live, '--out', both, '--cache', both], `--out ${both} is also --cache`);
    // The Markdown page beside the report would be the cache.
    await refused(
      [set, ...live, '--out', join(dir, 'r.json'), '--cache', join(dir, 'r.md')],
      `--out (its Markdown page) ${join(dir, 'r.md')} is also --cache`,
    );
  });

  it('an --out or --cache in a folder that does not exist, or that is a folder', async () => {
    const live = ['--models', 'live'];
    const missing = join(dir, 'no-such-folder', 'r.json');
    await refused(
      [set, ...live, '--out', missing, '--cache', join(dir, 'c.jsonl')],
      `--out ${missing}: the folder ${join(dir, 'no-such-folder')} does not exist`,
    );
    await refused(
      [set, ...live, '--out', join(dir, 'r.json'), '--cache', join(dir, 'no-such-folder', 'c.jsonl')],
      `--cache ${join(dir, 'no-such-folder', 'c.jsonl')}: the folder`,
    );
    const folder = join(dir, 'a-folder');
    await mkdir(folder);
    await refused(
      [set, ...live, '--out', folder, '--cache', join(dir, 'c.jsonl')],
      `--out ${folder} is a folder`,
    );
    await refused(
      [set, ...live, '--out', join(dir, 'r.json'), '--cache', folder],
      `--cache ${folder} is a folder`,
    );
  });

  it('paths that are fine still run, and write the report and the cache', async () => {
    const out = join(dir, 'ok.json');
    const cache = join(dir, 'ok-cache.jsonl');
    const result = await runCliOn(
      ctx.database.db,
      ['ai', 'evaluate', set, '--models', 'live', '--limit', '2', '--out', out, '--cache', cache],
      env,
    );
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(asked()).toBe(8);
    for (const path of [out, join(dir, 'ok.md'), join(dir, 'ok.svg'), cache])
      expect(existsSync(path)).toBe(true);
  });
});

import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { openApiAjv } from '../helpers/openapi-ajv.js';

/**
 * The payload examples of docs/ are recorded answers, never written by hand: each `<!-- example: Name -->`
 * block is written by scripts/openapi-examples.js from the answer it recorded, and checked here
 * against its schema, as the OpenAPI document's examples are.
 */

const DOCS = new URL('../../docs/', import.meta.url);
const RECORDED = JSON.parse(
  readFileSync(new URL('../../src/http/openapi-examples.json', import.meta.url), 'utf8'),
) as Record<string, unknown>;

interface Block {
  file: string;
  name: string | undefined;
  json: string;
}

function jsonBlocks(): Block[] {
  const blocks: Block[] = [];
  for (const file of readdirSync(DOCS).filter((f) => f.endsWith('.md'))) {
    const text = readFileSync(new URL(file, DOCS), 'utf8');
    for (const match of text.matchAll(/(?:<!-- example: (\w+) -->\n)?```json\n([\s\S]*?)\n```/g)) {
      blocks.push({ file, name: match[1], json: match[2] as string });
    }
  }
  return blocks;
}

let ctx: TestContext;
let components: Record<string, unknown>;

beforeAll(async () => {
  ctx = await createTestContext();
  components = (await ctx.request(null, { method: 'GET', url: '/api/v1/openapi.json' })).json().components;
});
afterAll(async () => {
  await ctx.close();
});

describe('docs examples', () => {
  it('are the recorded answers, each valid against its schema', () => {
    const ajv = openApiAjv();
    const marked = jsonBlocks().filter((block) => block.name !== undefined);
    expect(marked.map((b) => `${b.file}:${b.name}`).sort()).toEqual([
      'ai.md:AiRequestRecord',
      'jobs.md:SchedulePriceCheckResponse',
      'prices.md:PriceHistory',
      'webhooks.md:AiCallback',
      'webhooks.md:BalanceLowEvent',
      'webhooks.md:PriceCallback',
    ]);
    for (const { file, name, json } of marked) {
      const where = `docs/${file} ${name}`;
      const value = JSON.parse(json) as Record<string, unknown>;
      expect(value, where).toEqual(RECORDED[name as string]);
      if (name === 'AiCallback') {
        // The callback's envelope (docs/webhooks.md), its data the resolution's result followed by
        // the votes, each with its evidence (docs/ai.md#callbacks).
        expect(Object.keys(value), where).toEqual(['requestId', 'type', 'status', 'data', 'timestamp']);
        expect(value).toMatchObject({ type: 'ai', status: 'completed' });
        const { votes, ...result } = value.data as { votes: unknown[] };
        const validate = ajv.compile({ $ref: '#/components/schemas/AiResult', components });
        expect(validate(result), `${where}: ${JSON.stringify(validate.errors)}`).toBe(true);
        expect(votes, where).toHaveLength(4);
        const validateVote = ajv.compile({ $ref: '#/components/schemas/AiVote', components });
        for (const vote of votes)
          expect(validateVote(vote), `${where}: ${JSON.stringify(validateVote.errors)}`).toBe(true);
        continue;
      }
      if (name === 'PriceCallback') {
        // The envelope, its data the single price at the resolution time with the job's id.
        expect(Object.keys(value), where).toEqual(['requestId', 'type', 'status', 'data', 'timestamp']);
        expect(value).toMatchObject({ type: 'price', status: 'completed' });
        const { jobId, ...price } = value.data as Record<string, unknown>;
        expect(jobId, where).toMatch(/^job_/);
        const validate = ajv.compile({ $ref: '#/components/schemas/PriceResult', components });
        expect(validate(price), `${where}: ${JSON.stringify(validate.errors)}`).toBe(true);
        continue;
      }
      const validate = ajv.compile({ $ref: `#/components/schemas/${name}`, components });
      expect(validate(value), `${where}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
  });

  it('leave no answer unrecorded: every other JSON block is an input or a shape, not a payload', () => {
    // Blocks without a marker: the market events an operator ingests (markets.md), the admin
    // route's report (markets.md, not an API answer), the shape the models answer in (ai.md), the
    // error body's outline (api.md), and the two worked examples' attestations (attestations.md: a
    // price and a version 2 resolution, whose signatures and fields test/attestations/doc-example.test.ts checks).
    const unmarked = jsonBlocks().filter((block) => block.name === undefined);
    const byFile = unmarked.reduce<Record<string, number>>((count, b) => {
      count[b.file] = (count[b.file] ?? 0) + 1;
      return count;
    }, {});
    expect(byFile).toEqual({ 'ai.md': 1, 'api.md': 1, 'attestations.md': 2, 'markets.md': 9 });
  });
});

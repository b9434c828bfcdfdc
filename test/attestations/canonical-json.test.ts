import { describe, expect, it } from 'vitest';
import { canonicalJson as clientCanonicalJson } from '../../client/src/canonical-json.js';
import { evidenceHash } from '../../client/src/index.js';
import { evidenceDigest } from '../../src/attestations/layout.js';
import { canonicalJson } from '../../src/lib/canonical-json.js';

/**
 * The service's canonical JSON (src/lib/canonical-json.ts) and the client's own copy
 * (client/src/canonical-json.ts) write the same bytes: a version 2 resolution's evidence digest
 * recomputed by `evidenceHash` is the one the service signed (docs/attestations.md#the-message).
 */

const evidence = [
  [
    {
      kind: 'web',
      url: 'https://example.com/a?q="x"&y=ü',
      title: 'Title — «quoted» \u2028 line',
      quote: 'He said "yes"\n\tthen \\ left 😀',
      retrievedAt: '2026-12-01T00:00:00.000Z',
    },
  ],
  [],
  [
    {
      kind: 'sibyl',
      tool: 'sibyl_price',
      input: { symbol: 'SOL', at: '2026-12-01T00:00:00Z' },
      output: { vwapPrice: 150.41029587, sources: 3, valid: true, interval: null, big: 1e21, small: 5e-7 },
    },
  ],
  [
    {
      kind: 'sibyl',
      tool: 'sibyl_market',
      input: { id: 'm1' },
      output: { error: 'no data', '10': 1, '2': 2, Z: 0, a: -0 },
    },
  ],
];

/** A random JSON value: objects with keys in random order, arrays, strings with any code unit. */
function randomValue(random: () => number, depth: number): unknown {
  const pick = Math.floor(random() * (depth > 3 ? 4 : 7));
  const text = () =>
    String.fromCharCode(
      ...Array.from({ length: Math.floor(random() * 6) }, () => Math.floor(random() * 0x3000)),
    );
  switch (pick) {
    case 0:
      return null;
    case 1:
      return random() < 0.5;
    case 2:
      return (random() - 0.5) * 10 ** Math.floor(random() * 30 - 10);
    case 3:
      return text();
    case 4:
    case 5: {
      const object: Record<string, unknown> = {};
      for (let i = Math.floor(random() * 5); i > 0; i -= 1) object[text()] = randomValue(random, depth + 1);
      return object;
    }
    default:
      return Array.from({ length: Math.floor(random() * 4) }, () => randomValue(random, depth + 1));
  }
}

function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

describe('canonical JSON, service and client', () => {
  it('write the same bytes for evidence and for random JSON values', () => {
    expect(clientCanonicalJson(evidence)).toBe(canonicalJson(evidence));
    const random = seeded(47);
    for (let i = 0; i < 500; i += 1) {
      const value = randomValue(random, 0);
      expect(clientCanonicalJson(value)).toBe(canonicalJson(value));
      // Canonical: a JSON round trip (as through the database) does not change it, and it is JSON.
      expect(canonicalJson(JSON.parse(JSON.stringify(value)))).toBe(canonicalJson(value));
      expect(JSON.parse(canonicalJson(value))).toEqual(JSON.parse(JSON.stringify(value)));
    }
  });

  it('sorts the keys of every object, and leaves out what JSON.stringify leaves out', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { f: 1, e: 2 }], c: null }, u: undefined })).toBe(
      '{"a":{"c":null,"d":[3,{"e":2,"f":1}]},"b":1}',
    );
    expect(canonicalJson([undefined, 1])).toBe('[null,1]');
    expect(canonicalJson(undefined)).toBe('null');
  });

  it('the client’s evidenceHash is the digest the service signs', async () => {
    const votes = evidence.map((items) => ({ model: 'm', evidence: items }));
    expect(await evidenceHash({ votes })).toBe(evidenceDigest(evidence).toString('hex'));
  });
});

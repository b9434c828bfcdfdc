import Type from 'typebox';
import { describe, expect, it } from 'vitest';
import {
  canonicalJson,
  closedSchema,
  inOrder,
  propertyNames,
} from '../../src/markets/ingest/canonical-json.js';

/** The canonical body of an ingestion event (docs/markets.md#rules) and its fast form. */
describe('canonical JSON', () => {
  const closed = Type.Object(
    {
      zeta: Type.String(),
      alpha: Type.Optional(
        Type.Union([
          Type.Null(),
          Type.Object(
            {
              b: Type.Number(),
              a: Type.Array(
                Type.Object({ y: Type.Boolean(), x: Type.String() }, { additionalProperties: false }),
              ),
            },
            { additionalProperties: false },
          ),
        ]),
      ),
      mid: Type.Array(Type.String()),
    },
    { additionalProperties: false },
  );

  it('closedSchema: every object at every depth closed, or not', () => {
    expect(closedSchema(closed)).toBe(true);
    const open = Type.Object(
      { details: Type.Union([Type.Object({}), Type.Null()]) },
      { additionalProperties: false },
    );
    expect(closedSchema(open)).toBe(false);
    expect(closedSchema(Type.Object({ a: Type.String() }))).toBe(false);
    expect(closedSchema(Type.Array(Type.Object({}, { additionalProperties: true })))).toBe(false);
  });

  it('propertyNames: every name at every depth, through unions and arrays', () => {
    expect([...propertyNames(closed)].sort()).toEqual(['a', 'alpha', 'b', 'mid', 'x', 'y', 'zeta']);
  });

  it('JSON.stringify of inOrder with the sorted names is canonicalJson’s text', () => {
    const names = [...propertyNames(closed)].sort();
    const values = [
      { zeta: 'z "q" \\ é 😀\n', mid: ['b', 'a'] },
      { mid: [], zeta: '', alpha: null },
      {
        alpha: {
          a: [
            { x: 'x', y: true },
            { y: false, x: '\u2028' },
          ],
          b: -1.5e-7,
        },
        mid: ['1'],
        zeta: 'z',
      },
    ];
    for (const value of values) {
      expect(JSON.stringify(inOrder(value, names))).toBe(canonicalJson(value));
      // Keys in another order, the same text.
      const reversed = JSON.parse(JSON.stringify(value), (_k, v) =>
        v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).reverse()) : v,
      );
      expect(JSON.stringify(inOrder(reversed, names))).toBe(canonicalJson(value));
    }
    expect(canonicalJson({ b: 1, a: { d: [3, { f: 1, e: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[3,{"e":2,"f":1}]},"b":1}',
    );
  });
});

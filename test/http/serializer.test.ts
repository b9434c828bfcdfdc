import { describe, expect, it } from 'vitest';
import { lazySerializers } from '../../src/http/serializer.js';

/**
 * Serializers are compiled once per process and shared between apps by their schema's JSON
 * (src/http/serializer.ts): each app must still answer by its own route's schema.
 */
type Route = Parameters<ReturnType<typeof lazySerializers>>[0];

function serializerFor(schema: object, externalSchemas: Record<string, unknown> = {}) {
  const route = { schema, method: 'GET', url: '/x', httpStatus: '200' } as unknown as Route;
  return lazySerializers(externalSchemas, {})(route) as (data: unknown) => string;
}

const objectOf = (properties: Record<string, unknown>) => ({
  type: 'object',
  properties,
  additionalProperties: false,
});

describe('response serializers shared between apps', () => {
  it('the same schema, declared anew by another app, answers alike', () => {
    const first = serializerFor(objectOf({ a: { type: 'integer' }, b: { type: 'string' } }));
    const second = serializerFor(objectOf({ a: { type: 'integer' }, b: { type: 'string' } }));
    const data = { a: 1, b: 'x', c: 'dropped' };
    expect(first(data)).toBe('{"a":1,"b":"x"}');
    expect(second(data)).toBe('{"a":1,"b":"x"}');
  });

  it('a schema that differs in any keyword gets its own serializer', () => {
    const asInteger = serializerFor(objectOf({ a: { type: 'integer' } }));
    const asString = serializerFor(objectOf({ a: { type: 'string' } }));
    const renamed = serializerFor(objectOf({ b: { type: 'integer' } }));
    expect(asInteger({ a: 2, b: 3 })).toBe('{"a":2}');
    expect(asString({ a: 2, b: 3 })).toBe('{"a":"2"}');
    expect(renamed({ a: 2, b: 3 })).toBe('{"b":3}');
  });

  it('an app with shared schemas compiles its own, with them', () => {
    const withShared = serializerFor(
      { $ref: 'shared#' },
      { shared: { $id: 'shared', ...objectOf({ s: { type: 'string' } }) } },
    );
    expect(withShared({ s: 'y', t: 1 })).toBe('{"s":"y"}');
  });
});

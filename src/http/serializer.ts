import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { FastifyServerOptions } from 'fastify';

type SerializerFactory = NonNullable<
  NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildSerializer']
>;

/**
 * Each response schema's serializer, compiled once in a process and shared by every app built in it
 * with no shared schemas or options: a serializer is a function of its schema's JSON alone (the key
 * here), and the tests build an app per file, each of which compiled its own
 * (docs/testing.md#where-the-time-goes). Each app declares its routes' schemas anew, so an object
 * cannot be the key. A few hundred schemas at most: one per route and status.
 */
const compiledBySchema = new Map<string, (data: unknown) => string>();

/**
 * Fastify's own response serializers (fast-json-stringify, the same options and shared schemas),
 * each compiled on the first answer that needs it instead of for every route and status at start:
 * compiling them all was most of what building the API cost a process start
 * (docs/performance.md#command-start-up), and most statuses of most routes are never answered in
 * a process's life.
 */
export const lazySerializers: SerializerFactory = (externalSchemas, options) => {
  const compile = SerializerSelector()(externalSchemas, options);
  const shareable =
    Object.keys(externalSchemas ?? {}).length === 0 && Object.keys(options ?? {}).length === 0;
  const compiled = (route: Parameters<typeof compile>[0]): ((data: unknown) => string) => {
    const key = shareable ? keyOf(route.schema) : undefined;
    if (key === undefined) return compile(route);
    let serialize = compiledBySchema.get(key);
    if (!serialize) {
      serialize = compile(route);
      compiledBySchema.set(key, serialize);
    }
    return serialize;
  };
  return (route) => {
    let serialize: ((data: unknown) => string) | undefined;
    return (data: unknown) => {
      serialize ??= compiled(route);
      return serialize(data);
    };
  };
};

/** A schema's JSON, or undefined for one that has none (a BigInt in it): not shared then. */
function keyOf(schema: unknown): string | undefined {
  try {
    return JSON.stringify(schema);
  } catch {
    return undefined;
  }
}

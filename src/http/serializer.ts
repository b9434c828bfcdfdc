import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { FastifyServerOptions } from 'fastify';

type SerializerFactory = NonNullable<
  NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildSerializer']
>;

/**
 * Fastify's own response serializers (fast-json-stringify, the same options and shared schemas),
 * each compiled on the first answer that needs it instead of for every route and status at start:
 * compiling them all was most of what building the API cost a process start
 * (docs/performance.md#command-start-up), and most statuses of most routes are never answered in
 * a process's life.
 */
export const lazySerializers: SerializerFactory = (externalSchemas, options) => {
  const compile = SerializerSelector()(externalSchemas, options);
  return (route) => {
    let serialize: ((data: unknown) => string) | undefined;
    return (data: unknown) => {
      serialize ??= compile(route);
      return serialize(data);
    };
  };
};

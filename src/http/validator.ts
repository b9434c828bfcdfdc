import type { FastifySchemaCompiler, FastifySchemaValidationError } from 'fastify';
import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { Value } from 'typebox/value';

/** Whether any value under `schema` is other than a string (so text from a URL needs converting). */
function needsConversion(schema: unknown): boolean {
  if (typeof schema !== 'object' || schema === null) return false;
  const s = schema as Record<string, unknown>;
  if (typeof s.type === 'string' && s.type !== 'object' && s.type !== 'string') return true;
  if (Array.isArray(s.type)) return true;
  return Object.values(s).some((v) =>
    Array.isArray(v) ? v.some((item) => needsConversion(item)) : needsConversion(v),
  );
}

/**
 * TypeBox validation compiled once per route part. Bodies are JSON and checked as sent (no
 * coercion: `"name": 123` is an error, not "123"); path, query and header values are text, and are
 * converted to the schema's numbers or booleans — but only when the schema has any, because
 * converting every string-only path on every request is a measurable share of the hot path.
 */
export const validatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const check = Compile(schema);
  const convert = httpPart !== 'body' && needsConversion(schema);
  return (value: unknown) => {
    const candidate = convert ? Value.Convert(schema, value) : value;
    if (check.Check(candidate)) return { value: candidate };
    return { error: check.Errors(candidate) as unknown as FastifySchemaValidationError[] };
  };
};

import type { FastifyRequest, FastifySchemaCompiler, FastifySchemaValidationError } from 'fastify';
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
 * Each schema's TypeBox check, compiled once in a process and shared by every app built in it (the
 * tests build an app per file): a check is a function of its schema alone.
 */
const checks = new WeakMap<TSchema, ReturnType<typeof Compile<TSchema>>>();

function checkFor(schema: TSchema): ReturnType<typeof Compile<TSchema>> {
  let check = checks.get(schema);
  if (!check) {
    check = Compile(schema);
    checks.set(schema, check);
  }
  return check;
}

/**
 * TypeBox validation compiled once per route part. Bodies are JSON and checked as sent (no
 * coercion: `"name": 123` is an error, not "123"); path, query and header values are text, and are
 * converted to the schema's numbers or booleans — but only when the schema has any, because
 * converting every string-only path on every request is a measurable share of the hot path.
 */
export const validatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  // Compiled at the part's first request, not at start: most of a process's routes never see one
  // (docs/performance.md#command-start-up).
  let compiled: ReturnType<typeof Compile<TSchema>> | undefined;
  const convert =
    httpPart !== 'body' && needsConversion(schema)
      ? (numericFields(schema) ?? ((value: unknown) => Value.Convert(schema, value)))
      : undefined;
  return (value: unknown) => {
    const candidate = convert ? convert(value) : value;
    compiled ??= checkFor(schema);
    const check = compiled;
    if (check.Check(candidate)) return { value: candidate };
    return { error: check.Errors(candidate) as unknown as FastifySchemaValidationError[] };
  };
};

interface PropertySchema {
  type?: unknown;
  enum?: unknown;
  anyOf?: PropertySchema[];
}

/**
 * Whether a property takes text only: a string, an enumeration, or a union of string literals
 * (`Type.Union` of `Type.Literal`s, as the lists' `status` and `kind` filters are). Such a union had
 * sent its whole query to `Value.Convert`, which read `limit=1.5` as 1 and `limit=true` as 1.
 */
function textOnly(property: PropertySchema): boolean {
  if (property.type === 'string') return true;
  if (property.type !== undefined) return false;
  if (Array.isArray(property.enum)) return true;
  return Array.isArray(property.anyOf) && property.anyOf.length > 0 && property.anyOf.every(textOnly);
}

const INTEGER = /^-?\d{1,15}$/;
const NUMBER = /^-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * The converter of a flat object of text, enum, integer and number fields (every query of the API
 * but one): decimal text becomes a number, anything else is left for the check to refuse. Generic
 * `Value.Convert` cost about 60 µs a request for a four-field query — a third of a cached market
 * list's CPU (docs/performance.md) — and also turned "1.5" into 1 and "true" into 1 for an integer,
 * which this refuses. Other schemas (booleans, nested objects) keep `Value.Convert`, which would round
 * an integer beside them (test/http/validation.test.ts tries a fraction in every integer query field).
 */
function numericFields(schema: TSchema): ((value: unknown) => unknown) | undefined {
  const s = schema as { type?: unknown; properties?: Record<string, PropertySchema> };
  if (s.type !== 'object' || typeof s.properties !== 'object') return undefined;
  const fields: [string, RegExp][] = [];
  for (const [key, property] of Object.entries(s.properties)) {
    if (property.type === 'integer') fields.push([key, INTEGER]);
    else if (property.type === 'number') fields.push([key, NUMBER]);
    else if (!textOnly(property)) return undefined;
  }
  return (value) => {
    if (typeof value !== 'object' || value === null) return value;
    const record = value as Record<string, unknown>;
    for (const [key, pattern] of fields) {
      const text = record[key];
      if (typeof text === 'string' && pattern.test(text)) record[key] = Number(text);
    }
    return value;
  };
}

type PartValidator = ReturnType<typeof validatorCompiler>;

/** The parts of a request in the order Fastify validates them, with the request field of each. */
const PARTS = [
  ['params', 'params'],
  ['body', 'body'],
  ['querystring', 'query'],
  ['headers', 'headers'],
] as const;

const compiled = new WeakMap<object, PartValidator>();

function validatorFor(schema: TSchema, httpPart: string): PartValidator {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = validatorCompiler({ schema, httpPart, method: '', url: '' });
    compiled.set(schema, validate);
  }
  return validate;
}

/**
 * Fastify stops at the first part of a request that fails (params, then body, query, headers).
 * So that one answer names every problem, the parts it did not reach are checked here, on the error
 * path only: a valid request pays nothing for it.
 */
export function errorsOfUncheckedParts(
  request: FastifyRequest,
  failedPart: string,
): { part: string; errors: FastifySchemaValidationError[] }[] {
  const schema = request.routeOptions.schema as Partial<Record<string, TSchema>> | undefined;
  const failedAt = PARTS.findIndex(([part]) => part === failedPart);
  if (!schema || failedAt < 0) return [];
  const found: { part: string; errors: FastifySchemaValidationError[] }[] = [];
  for (const [part, field] of PARTS.slice(failedAt + 1)) {
    const partSchema = schema[part];
    if (!partSchema) continue;
    const value = (request as unknown as Record<string, unknown>)[field];
    const result = validatorFor(partSchema, part)(value === undefined ? null : value) as {
      error?: FastifySchemaValidationError[];
    };
    if (result.error) found.push({ part, errors: result.error });
  }
  return found;
}

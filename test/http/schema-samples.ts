import fc from 'fast-check';

/**
 * A small seeded generator of values from the JSON Schemas of the OpenAPI document, for the test
 * that every route accepts what its own schema accepts (schema-samples.test.ts). It covers the
 * keywords the document uses (type, enum/const, properties/required, items, min/max, pattern,
 * format, anyOf/oneOf/allOf); whatever it cannot make exactly (if/then, several patterns) it
 * approximates, and the test keeps only the samples a JSON Schema validator passes.
 *
 * Text without a pattern or format is words an integrator might send, from any script: plain words,
 * but also words with control characters (NUL, tab, DEL), invisible and bidirectional code points,
 * combining marks, astral characters (emoji, mathematical letters), non-Latin scripts — and text at
 * exactly its `minLength` or `maxLength` (in code points, as JSON Schema counts). Every date-time of one sample is later than the one before it, by at most
 * `step`, from a start the caller picks: a range (`from` before `to`) then holds, and a caller
 * starting in the recent past gets a range that has happened (what reports and price history take),
 * one starting now a schedule in the future.
 */

type Schema = Record<string, unknown>;

export interface SampleContext {
  random: () => number;
  /** Resolves a `$ref`. */
  resolve: (ref: string) => Schema;
  /** The time the sample's date-times start after (ms), advanced by each one made. */
  clock: number;
  /** The most each date-time is after the one before (ms). */
  step: number;
  seed: number;
}

/** Mulberry32: a tiny seeded PRNG, so that a failure can be replayed. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const WORDS = ['alpha', 'bravo', 'delta', 'echo', 'kilo', 'lima', 'oscar', 'sierra', 'tango', 'zulu'];

const int = (ctx: SampleContext, min: number, max: number) =>
  min + Math.floor(ctx.random() * (max - min + 1));
const pick = <T>(ctx: SampleContext, list: readonly T[]): T => list[int(ctx, 0, list.length - 1)] as T;

function merge(base: Schema, extra: Schema): Schema {
  const out: Schema = { ...base, ...extra };
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) if (!(key in extra)) delete out[key];
  return out;
}

function plainText(ctx: SampleContext, min: number, max: number): string {
  let text = `${pick(ctx, WORDS)}${int(ctx, 0, 999)}`;
  while (text.length < min) text += ` ${pick(ctx, WORDS)}`;
  return text.slice(0, max).trimEnd() || 'x';
}

/**
 * Code points an integrator's text may carry that plain words do not: C0 controls and DEL (NUL
 * first), invisible and bidirectional format characters, a combining mark, no-break and ideographic
 * spaces, non-Latin letters, astral characters (a surrogate pair each in UTF-16).
 */
export const UNUSUAL = [
  '\u0000',
  '\u0001',
  '\t',
  '\n',
  '\r',
  '\u001b',
  '\u007f',
  '\u0085',
  '\u200b',
  '\u200d',
  '\u2060',
  '\ufeff',
  '\u00ad',
  '\u202e',
  '\u2066',
  '\u200f',
  '\u0301',
  '\u00a0',
  '\u3000',
  'ß',
  'İ',
  'ع',
  'ש',
  '漢',
  'Ω',
  '😀',
  '👩‍💻',
  '𝔘',
  '\ufffd',
] as const;

/** Words with unusual code points among them; at least one letter, so that it is not blank by construction. */
function unusualText(ctx: SampleContext, min: number, max: number): string {
  const points: string[] = [...pick(ctx, WORDS)];
  const extra = int(ctx, 1, 4);
  for (let i = 0; i < extra; i++) points.splice(int(ctx, 0, points.length), 0, pick(ctx, UNUSUAL));
  while (points.length < min) points.push(ctx.random() < 0.3 ? pick(ctx, UNUSUAL) : pick(ctx, [...'abcxyz']));
  return points.slice(0, Math.max(1, max)).join('');
}

/** Text of exactly `length` code points (a boundary of the schema). */
function textOfLength(ctx: SampleContext, length: number): string {
  if (length <= 0) return '';
  const points: string[] = [];
  while (points.length < length) points.push(...`${pick(ctx, WORDS)} `);
  points.length = length;
  if (points[length - 1] === ' ') points[length - 1] = 'z';
  return points.join('');
}

function timestamp(ctx: SampleContext): Date {
  ctx.clock += int(ctx, Math.ceil(ctx.step / 20), ctx.step);
  return new Date(Math.floor(ctx.clock / 1000) * 1000);
}

function text(ctx: SampleContext, schema: Schema): string {
  const min = (schema.minLength as number | undefined) ?? 1;
  const max = (schema.maxLength as number | undefined) ?? 40;
  switch (schema.format) {
    case 'date-time':
      return timestamp(ctx).toISOString().replace('.000Z', 'Z');
    case 'date':
      // A date is its midnight: the next one is a day later, so that a range of dates is not empty.
      ctx.clock += 86_400_000;
      return timestamp(ctx).toISOString().slice(0, 10);
    case 'uri': {
      const callback = `https://hooks.example.com/${pick(ctx, WORDS)}/${int(ctx, 1, 999)}`;
      const pattern = typeof schema.pattern === 'string' ? new RegExp(schema.pattern, 'u') : undefined;
      return !pattern || pattern.test(callback) ? callback : `https://${pick(ctx, WORDS)}.example.com`;
    }
    case 'ipv4':
      return Array.from({ length: 4 }, () => int(ctx, 0, 255)).join('.');
    case 'ipv6':
      return `2001:db8:${int(ctx, 0, 65535).toString(16)}::${int(ctx, 1, 65535).toString(16)}`;
    default:
      break;
  }
  if (typeof schema.pattern === 'string' && schema.pattern.startsWith('^')) {
    const [value] = fc.sample(
      fc
        .stringMatching(new RegExp(schema.pattern, 'u'))
        .filter((s) => [...s].length >= min && [...s].length <= max),
      { seed: int(ctx, 0, 2 ** 30), numRuns: 1 },
    );
    return value as string;
  }
  const roll = ctx.random();
  if (roll < 0.35) return plainText(ctx, min, Math.max(min, Math.min(max, 40)));
  if (roll < 0.75) return unusualText(ctx, min, Math.max(min, Math.min(max, 40)));
  return textOfLength(ctx, ctx.random() < 0.5 ? min : max);
}

/** One value of `schema`; `undefined` for a schema it cannot read. */
export function sample(ctx: SampleContext, input: Schema): unknown {
  let schema: Schema = { ...input };
  if (typeof schema.$ref === 'string') schema = merge(ctx.resolve(schema.$ref), {});
  for (const part of (schema.allOf as Schema[] | undefined) ?? []) {
    // A second pattern (allOf) is left to the validator's filter; the first is generated.
    const { pattern: _pattern, ...rest } = part;
    schema = { ...schema, ...(schema.pattern === undefined ? part : rest) };
  }
  delete schema.allOf;
  const branches = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (branches?.length) return sample(ctx, merge(schema, pick(ctx, branches)));
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return pick(ctx, schema.enum);
  const type = Array.isArray(schema.type) ? pick(ctx, schema.type as string[]) : schema.type;
  switch (type) {
    case 'null':
      return null;
    case 'boolean':
      return ctx.random() < 0.5;
    case 'integer': {
      const min = (schema.minimum as number | undefined) ?? 0;
      const max = Math.min((schema.maximum as number | undefined) ?? min + 1000, min + 1000);
      return int(ctx, min, max);
    }
    case 'number': {
      const min = (schema.minimum as number | undefined) ?? 0;
      const max = (schema.maximum as number | undefined) ?? min + 1000;
      return Math.round((min + ctx.random() * (max - min)) * 1000) / 1000 || min;
    }
    case 'string':
      return text(ctx, schema);
    case 'array': {
      const min = (schema.minItems as number | undefined) ?? 0;
      const max = Math.min((schema.maxItems as number | undefined) ?? min + 3, min + 3);
      const items: unknown[] = [];
      const seen = new Set<string>();
      for (let tries = 0; items.length < int(ctx, min, max) && tries < 50; tries++) {
        const item = sample(ctx, (schema.items as Schema | undefined) ?? { type: 'string' });
        const key = JSON.stringify(item).toLowerCase();
        if (schema.uniqueItems && seen.has(key)) continue;
        seen.add(key);
        items.push(item);
      }
      return items;
    }
    case 'object':
    case undefined: {
      const properties = (schema.properties as Record<string, Schema> | undefined) ?? {};
      const required = new Set((schema.required as string[] | undefined) ?? []);
      const out: Record<string, unknown> = {};
      for (const [name, property] of Object.entries(properties)) {
        if (required.has(name) || ctx.random() < 0.5) out[name] = sample(ctx, property);
      }
      return out;
    }
    default:
      return undefined;
  }
}

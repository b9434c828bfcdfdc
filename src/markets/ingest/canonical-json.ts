import type { TSchema } from 'typebox';

/**
 * An event's canonical JSON, what "the same body" means for a redelivered event id
 * (docs/markets.md#rules): its JSON with the keys of every object sorted. Events recorded by every
 * earlier version were hashed in this form: it must not change.
 */
export { canonicalJson } from '../../lib/canonical-json.js';

/**
 * Whether every object a schema allows is closed (`additionalProperties: false`), at any depth: then
 * `propertyNames` names every property a valid value can have, and `inOrder` drops none.
 */
export function closedSchema(schema: TSchema): boolean {
  const node = schema as {
    type?: unknown;
    properties?: Record<string, TSchema>;
    additionalProperties?: unknown;
    items?: TSchema;
    anyOf?: TSchema[];
  };
  if (node.type === 'object' && node.additionalProperties !== false) return false;
  return (
    Object.values(node.properties ?? {}).every(closedSchema) &&
    (node.items === undefined || closedSchema(node.items)) &&
    (node.anyOf ?? []).every(closedSchema)
  );
}

/** Every property name a schema allows, at any depth (a set: sorted, the list `inOrder` takes). */
export function propertyNames(schema: TSchema, names = new Set<string>()): Set<string> {
  const node = schema as { properties?: Record<string, TSchema>; items?: TSchema; anyOf?: TSchema[] };
  for (const [name, property] of Object.entries(node.properties ?? {})) {
    names.add(name);
    propertyNames(property, names);
  }
  if (node.items) propertyNames(node.items, names);
  for (const member of node.anyOf ?? []) propertyNames(member, names);
  return names;
}

/**
 * A copy of a closed value (every property's name among `names`) whose objects have their properties
 * in `names`' order: `JSON.stringify` of it, with `names` sorted, is `canonicalJson`'s text, written on
 * `JSON.stringify`'s fast path; `JSON.stringify(value, names)` writes the same, at twice the time (a
 * list of names turns the fast path off). `canonicalJson` by hand was a quarter of a line's parse
 * (docs/performance.md#the-parse-of-an-ingestion-line).
 */
export function inOrder(value: unknown, names: readonly string[]): unknown {
  if (Array.isArray(value)) return value.map((item) => inOrder(item, names));
  if (value === null || typeof value !== 'object') return value;
  const source = value as Record<string, unknown>;
  const copy: Record<string, unknown> = {};
  for (const name of names) if (Object.hasOwn(source, name)) copy[name] = inOrder(source[name], names);
  return copy;
}

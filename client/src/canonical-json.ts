// Canonical JSON, as the service hashes the votes' evidence (docs/attestations.md#the-message):
// the client's own copy of the service's (its `lib/canonical-json.ts`; the client imports no server
// code), tested to write the same bytes (test/attestations/canonical-json.test.ts).

/**
 * `JSON.stringify`'s text with the keys of every object sorted (by UTF-16 code units, as
 * `Array.prototype.sort` orders strings), no spaces. An object's property whose value is
 * `undefined` is skipped, and `undefined` in an array (or alone) is `null`, as `JSON.stringify` does.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) {
    if (value.every((v) => v === null || typeof v !== 'object')) return JSON.stringify(value);
    return `[${value.map(canonicalJson).join(',')}]`;
  }
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const entries: string[] = [];
    for (const key of Object.keys(record).sort()) {
      if (record[key] === undefined) continue;
      entries.push(`${JSON.stringify(key)}:${canonicalJson(record[key])}`);
    }
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * Canonical JSON: `JSON.stringify`'s text with the keys of every object sorted (by UTF-16 code
 * units, as `Array.prototype.sort` orders strings), no spaces. The one form the service hashes
 * JSON in: an ingestion event's body (docs/markets.md#rules), an `Idempotency-Key` request's body,
 * and the votes' evidence a resolution's attestation signs (docs/attestations.md#the-message).
 * `@sibyl/client` has its own copy (`client/src/canonical-json.ts`), which must write the same
 * bytes (test/attestations/canonical-json.test.ts).
 *
 * What `JSON.stringify` leaves out stays out: an object's property whose value is `undefined` is
 * skipped, and `undefined` in an array (or alone) is `null`.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) {
    // A list of plain values is already canonical: one stringify, not one per item.
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

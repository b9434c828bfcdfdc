/** Cached answer bodies and their JSON without the braces, encoded once per cached body. */
const fieldsJson = new WeakMap<object, Buffer>();

/**
 * A reply serialiser for a cached body: the body's JSON, made and encoded once while it is cached,
 * with the request's own requestId, costUsd and remainingBalanceUsd around it. Serialising a
 * 20–30 KB market detail or a 17 KB list page on every request was most of those routes' CPU
 * (docs/performance.md, "Markets"); joining bytes instead of a string also spares Node.js measuring
 * and encoding the whole answer again for the socket. Cached bodies are built field by field in the
 * order of their response schema, so their JSON is what the schema serialiser writes (tests compare
 * the two). Any other payload — an error body, should the charge fail — is serialised plainly.
 */
export function cachedBodySerializer(
  body: object,
  carries: (payload: Record<string, unknown>) => boolean,
): (payload: Record<string, unknown>) => string {
  let fields = fieldsJson.get(body);
  if (fields === undefined) {
    fields = Buffer.from(JSON.stringify(body).slice(1, -1));
    fieldsJson.set(body, fields);
  }
  const json = fields;
  // Fastify sends bytes from a serialiser as it sends a string (lib/reply.js); its type says string.
  return ((payload: Record<string, unknown>): string | Buffer => {
    // Already serialised (a stored answer, should one ever pass through here): sent as it is.
    if (typeof payload === 'string') return payload;
    if (!('costUsd' in payload) || !carries(payload)) return JSON.stringify(payload);
    return Buffer.concat([
      Buffer.from(`{"requestId":${JSON.stringify(payload.requestId)},`),
      json,
      Buffer.from(
        `,"costUsd":${JSON.stringify(payload.costUsd)},"remainingBalanceUsd":${JSON.stringify(payload.remainingBalanceUsd)}}`,
      ),
    ]);
  }) as (payload: Record<string, unknown>) => string;
}

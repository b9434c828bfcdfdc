/** Cached answer bodies and their JSON without the braces, made once per cached body. */
const fieldsJson = new WeakMap<object, string>();

/**
 * A reply serialiser for a cached body: the body's JSON, made once while it is cached, with the
 * request's own requestId, costUsd and remainingBalanceUsd around it. Serialising a 20–30 KB market
 * detail or a 17 KB list page on every request was most of those routes' CPU (docs/performance.md,
 * "Markets"). Cached bodies are built field by field in the order of their response schema, so
 * their JSON is what the schema serialiser writes (tests compare the two). Any other payload — an
 * error body, should the charge fail — is serialised plainly.
 */
export function cachedBodySerializer(
  body: object,
  carries: (payload: Record<string, unknown>) => boolean,
): (payload: Record<string, unknown>) => string {
  let fields = fieldsJson.get(body);
  if (fields === undefined) {
    fields = JSON.stringify(body).slice(1, -1);
    fieldsJson.set(body, fields);
  }
  const json = fields;
  return (payload) => {
    if (!('costUsd' in payload) || !carries(payload)) return JSON.stringify(payload);
    return `{"requestId":${JSON.stringify(payload.requestId)},${json},"costUsd":${JSON.stringify(payload.costUsd)},"remainingBalanceUsd":${JSON.stringify(payload.remainingBalanceUsd)}}`;
  };
}

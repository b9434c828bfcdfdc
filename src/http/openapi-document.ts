import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { HANDLER_RULES } from './schemas.js';

/**
 * The last pass over the generated OpenAPI document, so that it reads as a contract a client
 * generator can use: every schema with a `title` becomes a named component referenced where it is
 * used (importable types instead of anonymous shapes), every answer documents its headers, and the
 * document names the server it describes.
 */

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Keywords whose values are data, not schemas: never searched for named schemas. */
const DATA_KEYWORDS = new Set(['examples', 'example', 'enum', 'const', 'default']);

const SCHEMA_KEYWORDS = ['type', 'properties', 'anyOf', 'oneOf', 'allOf', 'enum', 'items'];

/** `doc.components` (or one kind of component), created when absent. */
function componentsOf(doc: Json, kind?: string): Json {
  if (!isObject(doc.components)) doc.components = {};
  const components = doc.components as Json;
  if (kind === undefined) return components;
  if (!isObject(components[kind])) components[kind] = {};
  return components[kind] as Json;
}

/** Moves every titled schema under `paths` into `components.schemas`, leaving a `$ref`. */
export function hoistNamedSchemas(doc: Json): void {
  const schemas = componentsOf(doc, 'schemas');
  const visit = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(visit);
    if (!isObject(node)) return node;
    const out: Json = {};
    for (const [key, value] of Object.entries(node)) out[key] = DATA_KEYWORDS.has(key) ? value : visit(value);
    const name = out.title;
    if (typeof name !== 'string' || !SCHEMA_KEYWORDS.some((k) => k in out)) return out;
    const existing = schemas[name];
    if (existing !== undefined && !isDeepStrictEqual(existing, out)) {
      throw new Error(`OpenAPI: two different schemas are named ${name}`);
    }
    schemas[name] = out;
    return { $ref: `#/components/schemas/${name}` };
  };
  doc.paths = visit(doc.paths);
}

const HEADERS: Json = {
  'X-Request-Id': {
    description:
      'The id of this call (`req_…`); quote it to support. Most bodies repeat it as `requestId`; a body ' +
      'that describes another request (GET /ai/request/{requestId}, /ai/result/{requestId}, ' +
      '/webhooks/deliveries/{deliveryId}) carries that request’s id there instead',
    schema: { type: 'string', examples: ['req_4fKq8ZtV1xYwJ2mN7pRb3c'] },
  },
  'RateLimit-Limit': {
    description: 'Requests the key may burst (its bucket size)',
    schema: { type: 'integer', examples: [20] },
  },
  'RateLimit-Remaining': {
    description: 'Requests left in the bucket now',
    schema: { type: 'integer', examples: [19] },
  },
  'RateLimit-Reset': {
    description: 'Seconds until the bucket is full again',
    schema: { type: 'integer', examples: [1] },
  },
  'Retry-After': {
    description:
      'Seconds to wait before retrying: the rate-limit bucket (RATE_LIMIT_EXCEEDED), the quota period ' +
      '(QUOTA_EXCEEDED: can be hours), the first request with the key (IDEMPOTENCY_KEY_IN_USE), or the ' +
      'service (every 503)',
    schema: { type: 'integer', examples: [5] },
  },
  'Idempotent-Replayed': {
    description:
      '`true` when this answer is the stored answer of an earlier request with the same Idempotency-Key',
    schema: { type: 'string', enum: ['true'] },
  },
};

const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });

function errorCodesOf(response: Json): string[] {
  const content = response.content as Json | undefined;
  const schema = (content?.['application/json'] as Json | undefined)?.schema as Json | undefined;
  const code = (schema?.properties as Json | undefined)?.code as Json | undefined;
  return Array.isArray(code?.enum) ? (code.enum as string[]) : [];
}

/** Documents the response headers of every operation. */
export function documentHeaders(doc: Json): void {
  const components = componentsOf(doc);
  components.headers = HEADERS;
  for (const item of Object.values((doc.paths ?? {}) as Json)) {
    for (const operation of Object.values(item as Json)) {
      if (!isObject(operation) || !isObject(operation.responses)) continue;
      // Rate-limit headers come with API keys; the dashboard's session endpoints have none.
      const authenticated =
        Array.isArray(operation.security) &&
        operation.security.some((scheme) => isObject(scheme) && 'bearerAuth' in scheme);
      const idempotent =
        Array.isArray(operation.parameters) &&
        operation.parameters.some((p) => isObject(p) && p.in === 'header' && p.name === 'idempotency-key');
      for (const [status, response] of Object.entries(operation.responses)) {
        if (!isObject(response)) continue;
        const headers: Json = { 'X-Request-Id': headerRef('X-Request-Id') };
        if (authenticated) {
          for (const name of ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'])
            headers[name] = headerRef(name);
        }
        const codes = errorCodesOf(response);
        if (status === '429' || status === '503' || codes.includes('IDEMPOTENCY_KEY_IN_USE'))
          headers['Retry-After'] = headerRef('Retry-After');
        if (status === '200' && idempotent) headers['Idempotent-Replayed'] = headerRef('Idempotent-Replayed');
        response.headers = headers;
      }
    }
  }
}

/**
 * States the rules a route's own code enforces (schemas.ts, `handlerRules`) as the JSON Schema
 * keywords they are, filling in `$SETTING` values from the deployment's settings.
 */
export function stateHandlerRules(node: unknown, settings: Record<string, unknown> = {}): unknown {
  if (Array.isArray(node)) return node.map((item) => stateHandlerRules(item, settings));
  if (!isObject(node)) return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === HANDLER_RULES) continue;
    out[key] = DATA_KEYWORDS.has(key) ? value : stateHandlerRules(value, settings);
  }
  const rules = node[HANDLER_RULES];
  if (isObject(rules)) {
    for (const [key, value] of Object.entries(rules)) {
      if (typeof value === 'string' && value.startsWith('$')) {
        const setting = settings[value.slice(1)];
        if (setting === undefined) throw new Error(`OpenAPI: no setting ${value} for ${key}`);
        out[key] = setting;
      } else out[key] = value;
    }
  }
  return out;
}

/** Real answers, recorded by scripts/openapi-examples.js, by component name. */
const RECORDED_EXAMPLES = JSON.parse(
  readFileSync(new URL('./openapi-examples.json', import.meta.url), 'utf8'),
) as Record<string, unknown>;

/** Gives each named component its recorded example. */
export function attachExamples(doc: Json, examples: Record<string, unknown> = RECORDED_EXAMPLES): void {
  const schemas = componentsOf(doc, 'schemas');
  for (const [name, example] of Object.entries(examples)) {
    const schema = schemas[name];
    if (isObject(schema)) schema.examples = [example];
  }
}

/** Real error answers, recorded by scripts/openapi-examples.js: by code, or `operationId:CODE`. */
const RECORDED_ERRORS = JSON.parse(
  readFileSync(new URL('./openapi-error-examples.json', import.meta.url), 'utf8'),
) as Record<string, unknown>;

/**
 * Gives each error response one recorded answer per code it can carry, named by the code: the
 * operation's own answer where one was recorded (a NOT_FOUND of what its path names), else the code's,
 * else another operation's answer with that code. An error status whose body is not an error (the
 * readiness report of /readyz) gets the answer recorded as `operationId:status`.
 */
export function attachErrorExamples(doc: Json, errors: Record<string, unknown> = RECORDED_ERRORS): void {
  for (const item of Object.values((doc.paths ?? {}) as Json)) {
    for (const operation of Object.values(item as Json)) {
      if (!isObject(operation) || !isObject(operation.responses)) continue;
      const operationId = String(operation.operationId);
      for (const [status, response] of Object.entries(operation.responses)) {
        if (Number(status) < 400 || !isObject(response)) continue;
        const media = (response.content as Json | undefined)?.['application/json'];
        if (!isObject(media)) continue;
        const codes = errorCodesOf(response);
        // A body that is not an error (/readyz's 503: the readiness report), by `operationId:status`.
        const own = errors[`${operationId}:${status}`];
        if (codes.length === 0 && own !== undefined) {
          media.examples = { [status]: { summary: status, value: own } };
          continue;
        }
        const examples: Json = {};
        for (const code of codes) {
          const value =
            errors[`${operationId}:${code}`] ??
            errors[code] ??
            Object.entries(errors).find(([label]) => label.endsWith(`:${code}`))?.[1];
          if (value !== undefined) examples[code] = { summary: code, value };
        }
        if (Object.keys(examples).length > 0) media.examples = examples;
      }
    }
  }
}

export interface DocumentOptions {
  /** Where clients reach this service: PUBLIC_BASE_URL, else the listening address. */
  serverUrl: string;
  /** The settings some stated rules take their values from (`$NAME`, see `handlerRules`). */
  settings?: Record<string, unknown>;
  /** The `webhooks` of OpenAPI 3.1 (requests the service makes) and the named schemas they use. */
  webhooks?: { webhooks: Json; schemas: Json };
}

export function finishDocument(doc: Json, options: DocumentOptions): Json {
  doc.servers = [{ url: options.serverUrl }];
  doc.paths = stateHandlerRules(doc.paths, options.settings);
  documentHeaders(doc);
  attachErrorExamples(doc);
  hoistNamedSchemas(doc);
  if (options.webhooks) {
    doc.webhooks = options.webhooks.webhooks;
    Object.assign(componentsOf(doc, 'schemas'), options.webhooks.schemas);
  }
  attachExamples(doc);
  const components = doc.components as Json;
  components.schemas = Object.fromEntries(
    Object.entries(components.schemas as Json).sort(([a], [b]) => a.localeCompare(b)),
  );
  return doc;
}

import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, excerpt, type ValidationProblem, validationError } from '../errors.js';
import { metrics } from '../metrics/metrics.js';
import { errorsOfUncheckedParts } from './validator.js';

/** A route's own checks of a body the schema refused (`RouteSpec.bodyRules`, http/route.ts). */
export type BodyRules = (body: unknown, now: Date) => ValidationProblem[];

interface SchemaError {
  instancePath?: string;
  keyword?: string;
  message?: string;
  params?: Record<string, unknown>;
}

const CONTEXT_NAMES: Record<string, string> = {
  querystring: 'query',
  params: 'path',
  body: 'body',
  headers: 'header',
};

function joinPath(context: string, pointer: string, extra?: string): string {
  const parts = pointer
    .split('/')
    .filter(Boolean)
    .map((p) => (/^\d+$/.test(p) ? `[${p}]` : `.${p}`));
  if (extra) parts.push(`.${extra}`);
  return `${context}${parts.join('')}`;
}

/**
 * The names a page's size goes by: the spec's lists page with `page`/`pageSize`, its streams of
 * records (transactions, trades) with `limit`, and a first call often brings the other one. An
 * unknown name of these on a route that takes another says which (docs/api.md#errors).
 */
const PAGE_SIZE_NAMES = ['pageSize', 'limit'];

/** `; this route pages with pageSize` for `limit` on a route whose query takes `pageSize`, else ''. */
function pagingHint(name: string, schema: unknown): string {
  if (!PAGE_SIZE_NAMES.includes(name)) return '';
  const properties = (schema as { properties?: Record<string, unknown> } | undefined)?.properties ?? {};
  const instead = PAGE_SIZE_NAMES.find((other) => other !== name && other in properties);
  return instead ? `; this route pages with ${instead}` : '';
}

/**
 * One problem per schema error, named by where it is (`body.permissions[1]`). `schema`, the part's
 * schema, lets an unknown query parameter that is another route's page size name this route's.
 */
export function schemaProblems(
  context: string,
  errors: SchemaError[],
  schema?: unknown,
): ValidationProblem[] {
  const where = CONTEXT_NAMES[context] ?? context;
  const problems: ValidationProblem[] = [];
  for (const e of errors) {
    const pointer = e.instancePath ?? '';
    const params = e.params ?? {};
    const listed = (key: string): string[] => {
      const v = params[key];
      return Array.isArray(v) ? v.map(String) : typeof v === 'string' ? [v] : [];
    };
    if (e.keyword === 'required') {
      const missing = [...listed('requiredProperties'), ...listed('missingProperty')];
      for (const name of missing)
        problems.push({ path: joinPath(where, pointer, name), message: 'is required' });
      if (missing.length > 0) continue;
    }
    if (e.keyword === 'additionalProperties') {
      const extra = [...listed('additionalProperties'), ...listed('additionalProperty')];
      const hint = (name: string) => (where === 'query' && pointer === '' ? pagingHint(name, schema) : '');
      for (const name of extra)
        problems.push({ path: joinPath(where, pointer, name), message: `is not a known field${hint(name)}` });
      if (extra.length > 0) continue;
    }
    // TypeBox reports each unknown field twice; the additionalProperties entry names it better.
    if (e.keyword === 'boolean' && e.message === 'schema is false') continue;
    if (e.keyword === 'type' && pointer === '' && context === 'body' && params.type === 'object') {
      problems.push({ path: 'body', message: 'must be a JSON object' });
      continue;
    }
    if (e.keyword === 'enum') {
      const allowed = listed('allowedValues');
      problems.push({
        path: joinPath(where, pointer) || where,
        message: `must be one of: ${allowed.join(', ')}`,
        allowed,
      });
      continue;
    }
    // anyOf/union failures repeat the branch errors already listed; keep the specific ones.
    if ((e.keyword === 'anyOf' || e.keyword === 'oneOf') && errors.length > 1) continue;
    problems.push({ path: joinPath(where, pointer) || where, message: e.message ?? 'is invalid' });
  }
  const seen = new Set<string>();
  return problems.filter((p) => {
    const key = `${p.path}\u0000${p.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * The route's domain rules of the body (RouteSpec.bodyRules), on a request whose schema check failed:
 * the problems they find that the schema did not already report.
 */
function bodyRuleProblems(request: FastifyRequest, found: ValidationProblem[]): ValidationProblem[] {
  const config = request.routeOptions.config as { bodyRules?: BodyRules } | undefined;
  if (!config?.bodyRules || request.body === undefined) return [];
  const clock = (request.server as { services?: { clock: { now(): Date } } }).services?.clock;
  if (!clock) return [];
  const reported = new Set(found.map((p) => p.path));
  return config.bodyRules(request.body, clock.now()).filter((p) => !reported.has(p.path));
}

/** Turns anything thrown while handling a request into a member of the error vocabulary. */
export function toAppError(error: FastifyError | AppError | Error, request?: FastifyRequest): AppError {
  if (error instanceof AppError) return error;
  const e = error as FastifyError & { validation?: SchemaError[]; validationContext?: string };
  if (e.validation) {
    const failed = e.validationContext ?? 'body';
    const schemas = request?.routeOptions.schema as Record<string, unknown> | undefined;
    const problems = schemaProblems(failed, e.validation, schemas?.[failed]);
    if (request) {
      for (const { part, errors } of errorsOfUncheckedParts(request, failed))
        problems.push(...schemaProblems(part, errors as SchemaError[], schemas?.[part]));
      problems.push(...bodyRuleProblems(request, problems));
    }
    return validationError(problems);
  }
  switch (e.code) {
    // PostgreSQL refuses NUL and other unstorable characters in text: the input was bad, not us.
    case '22021':
    case '22P05':
      return validationError([
        { path: 'request', message: 'contains characters that cannot be stored (such as NUL)' },
      ]);
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('PAYLOAD_TOO_LARGE', 'The request body is larger than this service accepts');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return validationError([{ path: 'header.content-type', message: 'must be application/json' }]);
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return validationError([{ path: 'body', message: 'is empty but Content-Type is application/json' }]);
    default:
      break;
  }
  if (e instanceof SyntaxError || e.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
    return validationError([{ path: 'body', message: 'is not valid JSON' }], 'Malformed JSON body');
  }
  const status = typeof e.statusCode === 'number' ? e.statusCode : 500;
  if (status === 413)
    return new AppError('PAYLOAD_TOO_LARGE', 'The request body is larger than this service accepts');
  if (status >= 400 && status < 500)
    return validationError([{ path: 'request', message: 'is malformed' }], 'Bad request');
  return new AppError('INTERNAL_ERROR', 'Internal server error; retry later');
}

/**
 * The one error body, fields in one order on every answer: `error`, `code`, `requestId`, then
 * `details` and a code's extra fields when it has them (docs/api.md#errors).
 */
export function errorBody(error: AppError, requestId: string): Record<string, unknown> {
  return {
    error: error.message,
    code: error.code,
    requestId,
    ...(error.details ? { details: error.details } : {}),
    ...(error.extras ?? {}),
  };
}

/** An error body as sent: JSON text, by this one serialiser. */
export function errorJson(error: AppError, requestId: string): string {
  return JSON.stringify(errorBody(error, requestId));
}

/**
 * Sends an error answer: JSON text with its content type, whatever serialiser or content type the
 * route had set for its success (Fastify drops the content type of a reply that turns into an error,
 * and a route's own serialiser would otherwise write the body), so every error is the same bytes.
 */
export function sendError(reply: FastifyReply, error: AppError, requestId: string): FastifyReply {
  return reply.code(error.status).type('application/json; charset=utf-8').send(errorJson(error, requestId));
}

/**
 * Every 503 says when to come back: a few seconds for a price no venue could give or an instance
 * shutting down; longer for AI resolution a deployment is not configured for.
 */
const DEFAULT_RETRY_AFTER_SECONDS = 5;
const RETRY_AFTER_503: Partial<Record<string, number>> = {
  AI_UNAVAILABLE: 300,
  ATTESTATION_UNAVAILABLE: 300,
};

/** Refusals by authentication and access rules, counted by code (sibyl_auth_failures_total). */
const ACCESS_CODES = new Set<string>([
  'INVALID_API_KEY',
  'API_KEY_EXPIRED',
  'API_KEY_REVOKED',
  'ACCOUNT_NOT_FOUND',
  'ACCOUNT_SUSPENDED',
  'PERMISSION_DENIED',
  'IP_NOT_ALLOWED',
  'ORIGIN_NOT_ALLOWED',
]);

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | AppError, request: FastifyRequest, reply: FastifyReply) => {
    const appError = toAppError(error, request);
    if (ACCESS_CODES.has(appError.code)) metrics.authFailed(appError.code);
    if (appError.status >= 500) {
      // The cause goes to the log only; the body says nothing internal.
      request.log.error({ err: error }, 'request failed');
    }
    if (appError.headers) reply.headers(appError.headers);
    if (appError.status === 503 && !reply.hasHeader('retry-after')) {
      reply.header('retry-after', String(RETRY_AFTER_503[appError.code] ?? DEFAULT_RETRY_AFTER_SECONDS));
    }
    return sendError(reply, appError, request.id);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    const error = new AppError('NOT_FOUND', `No route ${request.method} ${excerpt(path)}`);
    return sendError(reply, error, request.id);
  });
}

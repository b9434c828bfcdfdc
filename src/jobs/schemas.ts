import Type from 'typebox';
import { LIMITS } from '../ai/index.js';
import {
  CALLBACK_HOST_RULE,
  callbackUrlRules,
  handlerRules,
  NO_NUL,
  NO_NUL_WORDS,
  SYMBOL_OR_MINT_PATTERN,
  SYMBOL_OR_MINT_RULE,
  Timestamp,
  timestampRules,
  UsdString,
} from '../http/schemas.js';
import { Delivery, MAX_CALLBACK_URL_CHARS } from '../webhooks/index.js';
import { JOB_STATUSES } from './jobs.js';

export const CallbackUrl = Type.String({
  maxLength: 4096,
  description: `HTTPS URL that receives the signed result callback (docs/webhooks.md). ${CALLBACK_HOST_RULE}`,
  examples: ['https://example.com/hooks/sibyl'],
  // The handler's limit is the outbox's (webhooks/port.ts); the schema's is a backstop.
  ...callbackUrlRules({ maxLength: MAX_CALLBACK_URL_CHARS }),
});

/** A far-enough example: within the 365 days a job may be scheduled ahead, and not soon in the past. */
const IsoTime = (description: string) =>
  Type.String({ maxLength: 64, description, examples: ['2027-06-30T12:00:00Z'], ...timestampRules() });

const SymbolOrMint = Type.String({
  maxLength: 64,
  description: SYMBOL_OR_MINT_RULE,
  examples: ['SOL'],
  ...handlerRules({ pattern: SYMBOL_OR_MINT_PATTERN }),
});

export const PriceScheduleBody = Type.Object(
  {
    symbol: SymbolOrMint,
    resolutionTimestamp: IsoTime('When to take the price: ISO 8601 with a zone, in the future, ≤ 365 days'),
    callbackUrl: CallbackUrl,
  },
  { title: 'PriceScheduleRequest', additionalProperties: false },
);

export const PriceScheduledBody = Type.Object(
  {
    symbol: SymbolOrMint,
    scheduledFor: IsoTime('When to take the price: ISO 8601 with a zone, in the future, ≤ 365 days'),
    callbackUrl: Type.Optional(CallbackUrl),
  },
  { title: 'PriceScheduledRequest', additionalProperties: false },
);

export const AiScheduleBody = Type.Object(
  {
    // The limits are checked with every other problem of the question (ai/input.ts), as on
    // POST /ai/resolve; the document states them as that route's schema does.
    question: Type.String({
      description: `1 to 1,000 characters, not blank. ${NO_NUL_WORDS}`,
      ...handlerRules({ minLength: 1, maxLength: LIMITS.questionMaxChars, pattern: '\\S', ...NO_NUL }),
    }),
    outcomes: Type.Array(
      Type.String(
        handlerRules({ minLength: 1, maxLength: LIMITS.outcomeMaxChars, pattern: '\\S', ...NO_NUL }),
      ),
      {
        description: `2 to 20 distinct labels of 1 to 200 characters (distinct also ignoring case). ${NO_NUL_WORDS}`,
        ...handlerRules({ minItems: LIMITS.minOutcomes, maxItems: LIMITS.maxOutcomes, uniqueItems: true }),
      },
    ),
    resolutionTimestamp: IsoTime('When to resolve: ISO 8601 with a zone, in the future, ≤ 365 days'),
    context: Type.Optional(
      Type.String({
        description: `Up to 10,000 characters. ${NO_NUL_WORDS}`,
        ...handlerRules({ maxLength: LIMITS.contextMaxChars, ...NO_NUL }),
      }),
    ),
    callbackUrl: CallbackUrl,
    confidenceThreshold: Type.Optional(
      Type.Number({ minimum: 0, maximum: 1, description: 'Minimum consensus confidence; default 0.75' }),
    ),
  },
  { title: 'AiScheduleRequest', additionalProperties: false },
);

const JobStatus = Type.Enum([...JOB_STATUSES], {
  description: 'PENDING, PROCESSING, COMPLETED, FAILED or CANCELLED',
});
const JobType = Type.Enum(['PRICE_RESOLUTION', 'AI_RESOLUTION']);

const jobFields = {
  jobId: Type.String({ examples: ['job_4kQe8fJ1mZc2rT7uVbN0Xa'] }),
  jobType: JobType,
  scheduledFor: Timestamp,
  status: JobStatus,
  createdAt: Timestamp,
  canCancel: Type.Boolean({
    description: 'Whether a cancel would succeed now (PENDING, ≥ 5 minutes before)',
  }),
};

export const JobCreated = Type.Object(jobFields, { additionalProperties: false });

export const JobSummary = Type.Object(jobFields, { title: 'JobSummary', additionalProperties: false });

export const JobList = Type.Object(
  {
    jobs: Type.Array(JobSummary, { description: 'Newest first' }),
    total: Type.Integer({ description: 'Jobs matching the filter, on every page' }),
    page: Type.Integer(),
    pageSize: Type.Integer(),
  },
  { additionalProperties: false },
);

export const JobListQuery = Type.Object(
  {
    status: Type.Optional(JobStatus),
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })),
    pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
  },
  { additionalProperties: false },
);

export const JobDetail = Type.Object(
  {
    ...jobFields,
    startedAt: Type.Union([Timestamp, Type.Null()]),
    finishedAt: Type.Union([Timestamp, Type.Null()]),
    attempts: Type.Integer({ description: 'Runs started (more than one when a worker died mid-run)' }),
    request: Type.Object({}, { additionalProperties: true, description: 'What was scheduled' }),
    callbackUrl: Type.Union([Type.String(), Type.Null()]),
    costUsd: UsdString,
    result: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], {
      description: 'Once COMPLETED: the single-price result, or the AI resolution result',
    }),
    error: Type.Union(
      [
        Type.Object({ code: Type.String(), message: Type.String() }, { additionalProperties: false }),
        Type.Null(),
      ],
      { description: 'Once FAILED: why (the job was refunded)' },
    ),
    delivery: Type.Union([Delivery, Type.Null()], {
      description: 'The callback delivery: its status (CALLBACK_FAILED when retries ran out) and attempts',
    }),
  },
  { additionalProperties: false },
);

export const JobIdParams = Type.Object({
  jobId: Type.String({
    maxLength: 64,
    description: `A job id, e.g. job_4kQe8fJ1…. ${NO_NUL_WORDS}`,
    ...handlerRules(NO_NUL),
  }),
});

export const Cancellation = Type.Object(
  {
    jobId: Type.String(),
    status: Type.Literal('cancelled'),
    refundUsd: UsdString,
    remainingBalanceUsd: UsdString,
  },
  { additionalProperties: false },
);

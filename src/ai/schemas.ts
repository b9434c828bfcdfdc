import Type, { type Static } from 'typebox';
import { AttestationSchema } from '../attestations/index.js';
import {
  CALLBACK_HOST_RULE,
  callbackUrlRules,
  handlerRules,
  NO_NUL,
  NO_NUL_WORDS,
  Timestamp,
  UsdString,
} from '../http/schemas.js';
import { Delivery, MAX_CALLBACK_URL_CHARS } from '../webhooks/index.js';
import { ABSTAIN_REASONS, EVIDENCE_LIMITS, SIBYL_TOOLS } from './evidence.js';
import { LIMITS } from './input.js';
import { FAILURE_KINDS, SEARCH_MODES } from './types.js';

const AbstainReason = Type.Union([Type.Enum(ABSTAIN_REASONS), Type.Null()]);

export const EvidenceSchema = Type.Union(
  [
    Type.Object(
      {
        kind: Type.Literal('web'),
        url: Type.String({
          maxLength: EVIDENCE_LIMITS.urlChars,
          description:
            'An `http(s)` URL the provider cited; Sibyl never fetches it. Untrusted: show it escaped',
        }),
        title: Type.String({
          maxLength: EVIDENCE_LIMITS.titleChars,
          description: 'As the provider gave it (may be empty)',
        }),
        quote: Type.Union([Type.String({ maxLength: EVIDENCE_LIMITS.quoteChars }), Type.Null()], {
          description: `The cited text, at most ${EVIDENCE_LIMITS.quoteChars} characters; null when the provider gives none`,
        }),
        retrievedAt: Timestamp,
      },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        kind: Type.Literal('sibyl'),
        tool: Type.Enum(SIBYL_TOOLS),
        input: Type.Object(
          {},
          { additionalProperties: true, description: 'The arguments the model called it with' },
        ),
        output: Type.Object({}, { additionalProperties: true, description: 'What Sibyl answered' }),
      },
      { additionalProperties: false },
    ),
  ],
  { description: 'One thing a model looked at' },
);

export const ResolveBody = Type.Object(
  {
    question: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: LIMITS.questionMaxChars,
        description: `The question to resolve (required unless \`marketId\` is given); not blank. ${NO_NUL_WORDS}`,
        ...handlerRules({ pattern: '\\S', ...NO_NUL }),
      }),
    ),
    outcomes: Type.Optional(
      Type.Array(
        Type.String({
          minLength: 1,
          maxLength: LIMITS.outcomeMaxChars,
          ...handlerRules({ pattern: '\\S', ...NO_NUL }),
        }),
        {
          minItems: LIMITS.minOutcomes,
          maxItems: LIMITS.maxOutcomes,
          uniqueItems: true,
          description: `The possible outcomes, distinct (also ignoring case); answers refer to them by zero-based index. ${NO_NUL_WORDS}`,
        },
      ),
    ),
    context: Type.Optional(
      Type.String({
        maxLength: LIMITS.contextMaxChars,
        description: `Additional context for the models; on sandbox accounts, \`[sandbox:…]\` directives steer the simulated models. ${NO_NUL_WORDS}`,
        ...handlerRules(NO_NUL),
      }),
    ),
    callbackUrl: Type.Optional(
      Type.String({
        maxLength: MAX_CALLBACK_URL_CHARS,
        description: `HTTPS URL that receives the signed result webhook (required unless \`marketId\` is given). ${CALLBACK_HOST_RULE}`,
        ...callbackUrlRules(),
      }),
    ),
    confidenceThreshold: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 1,
        description:
          'Minimum mean confidence of the winning outcome’s voters for `canDetermine` (default 0.75)',
      }),
    ),
    marketId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description:
          'Instead of question/outcomes/context: resolve this market (title, outcome labels, description)',
      }),
    ),
  },
  {
    title: 'AiResolveRequest',
    additionalProperties: false,
    // Checked by the handler (ai/requests.ts), every problem in one VALIDATION_ERROR.
    ...handlerRules({
      if: { required: ['marketId'] },
      // biome-ignore lint/suspicious/noThenProperty: `then` is the JSON Schema keyword
      then: {
        not: { anyOf: [{ required: ['question'] }, { required: ['outcomes'] }, { required: ['context'] }] },
      },
      else: { required: ['question', 'outcomes', 'callbackUrl'] },
    }),
  },
);

export type ResolveBodyInput = Static<typeof ResolveBody>;

export const SubmitResponse = Type.Object({
  requestId: Type.String({ description: 'The AI request id to poll (GET /ai/request/:requestId)' }),
  status: Type.Literal('processing'),
});

/** The context of a request as it was sent (docs/attestations.md#the-message). */
const CONTEXT_WORDS =
  'The context as it was sent: null when the request gave none (a market: no description), `""` when it gave `""`; with `question` and `outcomes`, what `hashQuestion` needs';
const ContextAsSent = Type.Union([Type.String(), Type.Null()], { description: CONTEXT_WORDS });

export const AiResult = Type.Object(
  {
    requestId: Type.String(),
    question: Type.String({ description: 'The question resolved' }),
    outcomes: Type.Optional(
      Type.Array(Type.String(), {
        description: 'The outcomes asked, in index order (absent on results stored before they were added)',
      }),
    ),
    context: Type.Optional(
      Type.Union([Type.String(), Type.Null()], {
        description: `${CONTEXT_WORDS} (absent on results stored before it was added)`,
      }),
    ),
    winningOutcomeIndex: Type.Union([Type.Integer(), Type.Null()], {
      description: 'Zero-based index of the plurality outcome; null when no model voted for an outcome',
    }),
    winningOutcomeLabel: Type.Union([Type.String(), Type.Null()]),
    confidence: Type.Number({
      minimum: 0,
      maximum: 1,
      description: 'Mean confidence of the winner’s voters',
    }),
    agreement: Type.Number({ minimum: 0, maximum: 1, description: 'Votes for the winner ÷ 4' }),
    reasoning: Type.String({ description: 'The winner’s voters’ reasoning, one line per model' }),
    modelsUsed: Type.Array(Type.String(), { description: 'The four models asked, `<provider>/<model>`' }),
    canDetermine: Type.Boolean({
      description: 'At least 3 of 4 voted for the winner and their mean confidence reached the threshold',
    }),
    abstainReason: Type.Union([Type.Enum(ABSTAIN_REASONS), Type.Null()], {
      description:
        'Not determined, and at least 3 models answered "cannot determine" for this same reason; else null',
    }),
    costUsd: UsdString,
    remainingBalanceUsd: UsdString,
    attestation: Type.Optional(AttestationSchema),
  },
  { title: 'AiResult', additionalProperties: false },
);

export type AiResultObject = Static<typeof AiResult>;

export const VoteSchema = Type.Object(
  {
    model: Type.String({ description: '`<provider>/<model>`' }),
    outcomeIndex: Type.Union([Type.Integer(), Type.Null()], {
      description: 'The outcome this model chose; null for "cannot determine" or a failure',
    }),
    confidence: Type.Union([Type.Number(), Type.Null()]),
    reasoning: Type.Union([Type.String(), Type.Null()]),
    latencyMs: Type.Integer(),
    error: Type.Union(
      [
        Type.Object({
          kind: Type.Enum(FAILURE_KINDS),
          message: Type.String(),
        }),
        Type.Null(),
      ],
      { description: 'Why this model gave no valid answer (it then counts as failing, never as a vote)' },
    ),
    usage: Type.Union([
      Type.Object({
        inputTokens: Type.Union([Type.Integer(), Type.Null()]),
        outputTokens: Type.Union([Type.Integer(), Type.Null()]),
      }),
      Type.Null(),
    ]),
    evidence: Type.Array(EvidenceSchema, {
      maxItems: EVIDENCE_LIMITS.items,
      description: 'What the model looked at, in the order it used them; empty when nothing',
    }),
    searches: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
      description:
        'Web searches the provider reports for the call; 0 when search was off; null when the provider does not say (an OpenAI-compatible slot has no web search)',
    }),
    abstainReason: {
      ...AbstainReason,
      description: 'Why a valid answer is "cannot determine"; null on a vote for an outcome and on a failure',
    },
    search: Type.Union([Type.Enum(SEARCH_MODES), Type.Null()], {
      description:
        'Whether the call was offered its provider’s web search: `on`; `off` (AI_WEB_SEARCH, the slot’s AI_MODEL_n_WEB_SEARCH, or an evaluation without search); `unavailable` (the slot’s provider has none, as an OpenAI-compatible endpoint). Null on an abandoned model’s vote and on votes stored before the field existed',
    }),
  },
  { title: 'AiVote', description: 'One model’s answer (extension)' },
);

export type AiVoteObject = Static<typeof VoteSchema>;

export const AiRecord = Type.Object({
  requestId: Type.String(),
  status: Type.Union([
    Type.Literal('PENDING'),
    Type.Literal('PROCESSING'),
    Type.Literal('COMPLETED'),
    Type.Literal('FAILED'),
  ]),
  question: Type.String({ description: 'The question asked (a market: its title)' }),
  outcomes: Type.Array(Type.String(), { description: 'The outcomes asked, in index order' }),
  context: ContextAsSent,
  createdAt: Timestamp,
  completedAt: Type.Optional(Timestamp),
  result: Type.Optional(AiResult),
  error: Type.Optional(
    Type.Object(
      { code: Type.String(), message: Type.String() },
      { description: 'FAILED: why (fewer than 3 of the 4 models gave a valid answer)' },
    ),
  ),
  refundUsd: Type.Optional(UsdString),
  votes: Type.Array(VoteSchema, { description: 'The answers received so far, in slot order (extension)' }),
  delivery: Type.Optional({
    ...Delivery,
    description: 'Once finished, with a callbackUrl: the callback delivery, its status and every attempt',
  }),
});

export type AiRecordObject = Static<typeof AiRecord>;

const RequestStatus = Type.Union([
  Type.Literal('PENDING'),
  Type.Literal('PROCESSING'),
  Type.Literal('COMPLETED'),
  Type.Literal('FAILED'),
]);

export const AiRequestSummary = Type.Object(
  {
    requestId: Type.String(),
    status: RequestStatus,
    question: Type.String(),
    outcomes: Type.Array(Type.String()),
    context: ContextAsSent,
    marketId: Type.Union([Type.String(), Type.Null()], { description: 'The market resolved, if one was' }),
    createdAt: Timestamp,
    completedAt: Type.Union([Timestamp, Type.Null()]),
    winningOutcomeLabel: Type.Union([Type.String(), Type.Null()], {
      description: 'Once COMPLETED: the plurality outcome (null when no model voted for one)',
    }),
    canDetermine: Type.Union([Type.Boolean(), Type.Null()], { description: 'Once COMPLETED' }),
    abstainReason: {
      ...AbstainReason,
      description: 'Once COMPLETED: the result’s `abstainReason`',
    },
    costUsd: UsdString,
    refundUsd: Type.Union([UsdString, Type.Null()], { description: 'FAILED requests: the refund' }),
    votes: Type.Array(VoteSchema, {
      description: 'The answers received so far, in slot order, with their evidence',
    }),
  },
  { title: 'AiRequestSummary', additionalProperties: false },
);

export type AiRequestSummaryObject = Static<typeof AiRequestSummary>;

export const AiRequestListQuery = Type.Object(
  {
    status: Type.Optional(RequestStatus),
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })),
    pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
  },
  { additionalProperties: false },
);

export const AiRequestList = Type.Object(
  {
    requests: Type.Array(AiRequestSummary, { description: 'Newest first' }),
    total: Type.Integer({ description: 'Requests matching the filter, on every page' }),
    page: Type.Integer(),
    pageSize: Type.Integer(),
  },
  { additionalProperties: false },
);

/** The AI part of /readyz. */
export const AiReadiness = Type.Object({
  live: Type.Union([Type.Literal('available'), Type.Literal('unavailable')], {
    description: 'Whether live accounts can resolve (all four model slots configured)',
  }),
  models: Type.Array(
    Type.Object({
      slot: Type.Integer(),
      model: Type.String({ description: '`<provider>/<model>`' }),
      configured: Type.Boolean(),
      reason: Type.Optional(Type.String()),
    }),
  ),
});

import Type, { type Static, type TSchema } from 'typebox';
import { NullableTimestamp, Timestamp, UsdString } from '../http/schemas.js';

/**
 * The catalog of account events (docs/webhooks.md#event-catalog): every type an endpoint may
 * subscribe to, what it means, and the JSON Schema of its `data`. One place: the routes'
 * validation, GET /webhooks/event-types, the OpenAPI document's `webhooks` and the client's types
 * all read it.
 */

const ErrorObject = Type.Object(
  {
    code: Type.String({ description: 'An error code of the API (docs/api.md#errors)' }),
    message: Type.String(),
  },
  { additionalProperties: false },
);

const ResolutionCompleted = Type.Object(
  {
    requestId: Type.String({ description: 'The AI request (GET /ai/resolve/{requestId})' }),
    jobId: Type.Union([Type.String(), Type.Null()], { description: 'The scheduled job that ran it, if any' }),
    result: Type.Object(
      {},
      {
        additionalProperties: true,
        description: 'The result object, as GET /ai/resolve/{requestId} answers it once COMPLETED',
      },
    ),
  },
  { additionalProperties: false },
);

const ResolutionFailed = Type.Object(
  {
    requestId: Type.String(),
    jobId: Type.Union([Type.String(), Type.Null()]),
    error: ErrorObject,
  },
  { additionalProperties: false },
);

const JobKind = Type.Union([Type.Literal('price'), Type.Literal('ai')]);

const JobCompleted = Type.Object(
  {
    jobId: Type.String(),
    type: JobKind,
    requestId: Type.String({ description: 'The request the job ran as (its result’s requestId)' }),
    result: Type.Object(
      {},
      { additionalProperties: true, description: 'The job’s result, as GET /jobs/{jobId}' },
    ),
  },
  { additionalProperties: false },
);

const JobFailed = Type.Object(
  {
    jobId: Type.String(),
    type: JobKind,
    requestId: Type.String(),
    error: ErrorObject,
  },
  { additionalProperties: false },
);

const DepositCredited = Type.Object(
  {
    id: Type.String({ description: 'The deposit: its reference on the chain' }),
    status: Type.Literal('credited'),
    token: Type.Union([Type.Literal('SOL'), Type.Literal('USDC'), Type.Null()]),
    amount: Type.Union([Type.String(), Type.Null()], { description: 'In the token’s units' }),
    usdValue: Type.Union([UsdString, Type.Null()]),
    rateUsd: Type.Union([Type.String(), Type.Null()]),
    signature: Type.Union([Type.String(), Type.Null()]),
    slot: Type.Union([Type.Integer(), Type.Null()]),
    reference: Type.Union([Type.String(), Type.Null()]),
    memo: Type.Union([Type.String(), Type.Null()]),
    createdAt: Timestamp,
    balanceUsd: { ...UsdString, description: 'The account’s balance once this deposit was credited' },
  },
  { additionalProperties: false },
);

const BalanceLow = Type.Object(
  {
    thresholdUsd: { ...UsdString, description: 'The threshold the balance fell below (PUT /account/alerts)' },
    balanceUsd: { ...UsdString, description: 'The balance after the change that crossed it' },
    accountId: Type.String(),
  },
  { additionalProperties: false },
);

const BalanceDepleted = Type.Object(
  {
    accountId: Type.String(),
    balanceUsd: { ...UsdString, description: 'The balance when a paid request was refused with 402' },
  },
  { additionalProperties: false },
);

const KeyExpiring = Type.Object(
  {
    keyId: Type.String(),
    name: Type.Union([Type.String(), Type.Null()]),
    expiresAt: Timestamp,
    daysLeft: Type.Integer({ description: '7 or 1: the warning this is' }),
  },
  { additionalProperties: false },
);

const EndpointDisabled = Type.Object(
  {
    endpointId: Type.String({ description: 'The endpoint disabled (not this one)' }),
    url: Type.String(),
    reason: Type.String(),
    failingSince: NullableTimestamp,
    failedDeliveries: Type.Integer({ minimum: 0 }),
  },
  { additionalProperties: false },
);

/** Each type: its description and its data's schema. The order is the catalog's. */
export const EVENT_CATALOG = {
  'resolution.completed': {
    description: 'An AI resolution finished with an answer (the same result its callbackUrl receives).',
    data: ResolutionCompleted,
  },
  'resolution.failed': {
    description: 'An AI resolution failed (and was refunded).',
    data: ResolutionFailed,
  },
  'job.completed': { description: 'A scheduled job ran and completed.', data: JobCompleted },
  'job.failed': { description: 'A scheduled job ran and failed (and was refunded).', data: JobFailed },
  'deposit.credited': {
    description:
      'A deposit from the chain was credited: the deposit as the deposits list shows it, and the new balance.',
    data: DepositCredited,
  },
  'balance.low': {
    description: 'A committed change took the balance from at or above an alert threshold to below it.',
    data: BalanceLow,
  },
  'balance.depleted': {
    description:
      'A paid request was refused with 402 INSUFFICIENT_BALANCE for the first time since the last credit.',
    data: BalanceDepleted,
  },
  'key.expiring': {
    description: 'An API key expires in 7 days, or in 1 day (each warning sent once).',
    data: KeyExpiring,
  },
  'endpoint.disabled': {
    description:
      'Another endpoint of the account was disabled: its deliveries had all failed for WEBHOOK_ENDPOINT_DISABLE_AFTER.',
    data: EndpointDisabled,
  },
} satisfies Record<string, { description: string; data: TSchema }>;

export type AccountEventType = keyof typeof EVENT_CATALOG;

export const EVENT_TYPES = Object.keys(EVENT_CATALOG) as AccountEventType[];

export function isEventType(name: string): name is AccountEventType {
  return Object.hasOwn(EVENT_CATALOG, name);
}

/** The `data` of an event of type T. */
export type AccountEventData<T extends AccountEventType> = Static<(typeof EVENT_CATALOG)[T]['data']>;

import Type from 'typebox';
import {
  callbackUrlRules,
  handlerRules,
  NO_NUL,
  NO_NUL_WORDS,
  NullableTimestamp,
  Timestamp,
} from '../http/schemas.js';
import { MAX_CALLBACK_URL_CHARS } from './port.js';

export const DeliveryStatus = Type.Union(
  [
    Type.Literal('PENDING'),
    Type.Literal('SENDING'),
    Type.Literal('DELIVERED'),
    Type.Literal('STOPPED'),
    Type.Literal('CALLBACK_FAILED'),
    Type.Literal('CANCELLED'),
  ],
  {
    description:
      'PENDING (an attempt is scheduled), SENDING (an attempt is in progress), DELIVERED (2xx), STOPPED ' +
      '(the receiver answered 410), CALLBACK_FAILED (every attempt failed), CANCELLED (stopped by its account, ' +
      'POST /webhooks/deliveries/{deliveryId}/cancel)',
  },
);

export const Attempt = Type.Object(
  {
    attempt: Type.Integer({ minimum: 1 }),
    at: Timestamp,
    statusCode: Type.Union([Type.Integer(), Type.Null()], { description: 'The receiver’s status code' }),
    error: Type.Union([Type.String(), Type.Null()], {
      description: 'Why no answer came: timeout, blocked_address, dns, tls or connection, with a message',
    }),
    latencyMs: Type.Integer(),
  },
  { additionalProperties: false },
);

export const deliveryFields = {
  id: Type.String({ description: 'The delivery id, which is also its `webhook-id`' }),
  webhookId: Type.String({
    description: 'The `webhook-id` header: the same on every attempt and redelivery',
  }),
  type: Type.String({
    description:
      'What it reports: `ai`, `price` or `test` for a request’s callback, or an account event’s type sent to a ' +
      'registered endpoint (`balance.low`, …: docs/webhooks.md#event-catalog)',
    examples: ['ai', 'balance.low'],
  }),
  requestId: Type.String({
    description:
      'The request whose result this delivery reports; in the answer to a redelivery, that answer’s own ' +
      'request id (X-Request-Id), like every action’s answer',
  }),
  originalRequestId: Type.String({
    description: 'The request whose result this delivery reports (the payload’s requestId), in every answer',
  }),
  url: Type.String(),
  status: DeliveryStatus,
  attemptCount: Type.Integer({ minimum: 0 }),
  nextAttemptAt: NullableTimestamp,
  lastStatusCode: Type.Union([Type.Integer(), Type.Null()]),
  lastError: Type.Union([Type.String(), Type.Null()]),
  createdAt: Timestamp,
  finishedAt: NullableTimestamp,
  cancelledAt: Type.Union([Timestamp, Type.Null()], {
    description:
      'When its account cancelled it; set while an attempt in flight finishes (status SENDING), after which ' +
      'no further attempt is made',
  }),
};

export const DeliverySummary = Type.Object(deliveryFields, {
  title: 'WebhookDeliverySummary',
  additionalProperties: false,
});

export const Delivery = Type.Object(
  { ...deliveryFields, attempts: Type.Array(Attempt, { description: 'Every attempt, oldest first' }) },
  { additionalProperties: false },
);

export const DeliveryList = Type.Object(
  {
    deliveries: Type.Array(DeliverySummary, { description: 'Newest first' }),
    total: Type.Integer(),
    page: Type.Integer(),
    pageSize: Type.Integer(),
  },
  { additionalProperties: false },
);

export const DeliveryListQuery = Type.Object(
  {
    status: Type.Optional(DeliveryStatus),
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })),
    pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
  },
  { additionalProperties: false },
);

export const DeliveryParams = Type.Object({
  deliveryId: Type.String({
    minLength: 1,
    maxLength: 100,
    description: `The delivery's id. ${NO_NUL_WORDS}`,
    ...handlerRules(NO_NUL),
  }),
});

export const TestBody = Type.Object(
  {
    callbackUrl: Type.String({
      maxLength: MAX_CALLBACK_URL_CHARS,
      description: 'An https:// URL to send a signed `type: "test"` event to, now',
      ...callbackUrlRules(),
    }),
  },
  { title: 'WebhookTestRequest', additionalProperties: false },
);

export const TestResult = Type.Object(
  {
    deliveryId: Type.String(),
    webhookId: Type.String(),
    delivered: Type.Boolean({ description: 'True when the receiver answered 2xx' }),
    status: DeliveryStatus,
    statusCode: Type.Union([Type.Integer(), Type.Null()]),
    latencyMs: Type.Integer(),
    error: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false },
);

export const WebhookSecret = Type.Object(
  {
    webhookSecret: Type.String({
      description:
        'The current secret (whsec_…): the Standard Webhooks key of every callback; keep it server-side',
    }),
  },
  { additionalProperties: false },
);

export const StreamEvent = Type.Object(
  {
    id: Type.String({ description: 'The delivery id: its `webhook-id`' }),
    headers: Type.Record(Type.String(), Type.String(), {
      description:
        'The headers a delivery of this event carries, signatures included (`webhook-id`, `webhook-timestamp`, ' +
        '`webhook-signature`, `X-Service-Signature`, `Content-Type`, `User-Agent`)',
    }),
    body: Type.String({ description: 'The raw body, exactly as a delivery sends it (`signature` last)' }),
  },
  { additionalProperties: false },
);

export const RotatedSecret = Type.Object(
  {
    webhookSecret: Type.String({ description: 'The new secret (whsec_…), shown this once' }),
    previousSecretValidUntil: Timestamp,
  },
  { additionalProperties: false },
);

export const StreamHeaders = Type.Object({
  'last-event-id': Type.Optional(
    Type.String({
      pattern: '^msg_[A-Za-z0-9]{22}$',
      description:
        'The id of the last event received (EventSource sends it when it reconnects): the events after it are sent first',
    }),
  ),
});

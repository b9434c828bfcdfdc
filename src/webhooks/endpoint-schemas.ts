import Type from 'typebox';
import { cursorParameter } from '../http/cursor.js';
import {
  CALLBACK_HOST_RULE,
  callbackUrlRules,
  handlerRules,
  NullableTimestamp,
  Timestamp,
} from '../http/schemas.js';
import { EVENT_CATALOG } from './event-types.js';
import { MAX_CALLBACK_URL_CHARS } from './port.js';
import { Attempt, DeliveryStatus, deliveryFields } from './schemas.js';

const EventTypes = Type.Array(
  Type.String({
    minLength: 1,
    maxLength: 64,
    // An unknown name is refused by the handler with a problem naming it (docs/webhooks.md#endpoints).
    ...handlerRules({ enum: [...Object.keys(EVENT_CATALOG), '*'] }),
  }),
  {
    minItems: 1,
    maxItems: 32,
    description: `Catalog names (GET /webhooks/event-types), or ["*"] for every type (a list that names "*" is every type): ${Object.keys(EVENT_CATALOG).join(', ')}`,
    examples: [['deposit.credited', 'key.expiring']],
  },
);

const Url = Type.String({
  minLength: 1,
  maxLength: MAX_CALLBACK_URL_CHARS,
  description:
    'Where the events are posted: https:// (http:// to loopback only in local development), at most 2,048 characters, ' +
    `no user name or password. ${CALLBACK_HOST_RULE}`,
  examples: ['https://example.com/hooks/sibyl'],
  ...callbackUrlRules({ maxLength: MAX_CALLBACK_URL_CHARS }),
});

const Description = Type.String({ maxLength: 256, description: 'Your note: what this endpoint is for' });

export const EndpointCreateBody = Type.Object(
  { url: Url, eventTypes: EventTypes, description: Type.Optional(Description) },
  { additionalProperties: false },
);

export const EndpointUpdateBody = Type.Object(
  {
    url: Type.Optional(Url),
    eventTypes: Type.Optional(EventTypes),
    description: Type.Optional(Type.Union([Description, Type.Null()])),
    enabled: Type.Optional(
      Type.Boolean({
        description:
          'false: no new event is sent to it; true: enabled again (after its health disabled it, too)',
      }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const EndpointParams = Type.Object({
  endpointId: Type.String({
    pattern: '^we_[1-9A-HJ-NP-Za-km-z]{24}$',
    description: 'The endpoint id (we_…)',
  }),
});

const endpointFields = {
  id: Type.String({ description: 'we_ and 24 base58 characters' }),
  url: Type.String(),
  eventTypes: Type.Array(Type.String()),
  description: Type.Union([Type.String(), Type.Null()]),
  enabled: Type.Boolean(),
  disabledAt: NullableTimestamp,
  disabledReason: Type.Union([Type.String(), Type.Null()], {
    description:
      'Why it is disabled: by its owner, or its deliveries all failing (docs/webhooks.md#endpoint-health)',
  }),
  previousSecretValidUntil: Type.Union([Timestamp, Type.Null()], {
    description: 'After a rotation: until when the previous secret still signs beside the current one',
  }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
};

export const Endpoint = Type.Object(endpointFields, { additionalProperties: false });

export const CreatedEndpoint = Type.Object(
  {
    ...endpointFields,
    secret: Type.String({
      description: 'The endpoint’s signing secret (whsec_…), shown only in this answer',
    }),
  },
  { additionalProperties: false },
);

export const EndpointList = Type.Object({ endpoints: Type.Array(Endpoint) }, { additionalProperties: false });

export const DeletedEndpoint = Type.Object(
  {
    id: Type.String(),
    deleted: Type.Literal(true),
    cancelledDeliveries: Type.Integer({ description: 'Its deliveries still waiting, now CANCELLED' }),
  },
  { additionalProperties: false },
);

export const RotatedEndpointSecret = Type.Object(
  {
    id: Type.String(),
    secret: Type.String({ description: 'The new secret (whsec_…), shown this once' }),
    previousSecretValidUntil: Timestamp,
  },
  { additionalProperties: false },
);

export const EventTypeList = Type.Object(
  {
    eventTypes: Type.Array(
      Type.Object(
        {
          name: Type.String(),
          description: Type.String(),
          schema: Type.Object(
            {},
            { additionalProperties: true, description: 'The JSON Schema of the event’s `data`' },
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

const EndpointDelivery = Type.Object(
  {
    ...deliveryFields,
    type: Type.String({ description: 'The event’s type (a catalog name)' }),
    eventId: Type.Union([Type.String(), Type.Null()], {
      description: 'The event (evt_…) this delivery sends',
    }),
    attempts: Type.Array(Attempt, { description: 'Every attempt, oldest first' }),
  },
  { title: 'WebhookEndpointDelivery', additionalProperties: false },
);

export const EndpointDeliveryList = Type.Object(
  {
    deliveries: Type.Array(EndpointDelivery, { description: 'Newest first' }),
    nextCursor: Type.Union([Type.String(), Type.Null()], {
      description: 'Pass as `cursor` for the next page; null when there is none',
    }),
  },
  { additionalProperties: false },
);

export const EndpointDeliveryQuery = Type.Object(
  {
    status: Type.Optional(DeliveryStatus),
    eventType: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z]+\\.[a-z]+$' })),
    since: Type.Optional(Timestamp),
    cursor: cursorParameter(
      'The `nextCursor` of the previous answer, for the same endpoint and filters. Only a cursor the service ' +
        'made is accepted: an altered one, or one of another endpoint or filter, is 400 VALIDATION_ERROR',
    ),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
  },
  { additionalProperties: false },
);

export const RecoverBody = Type.Object(
  { since: { ...Timestamp, description: 'Failed deliveries created at or after this, at most 7 days ago' } },
  { additionalProperties: false },
);

export const Recovered = Type.Object(
  {
    id: Type.String({ description: 'The endpoint id' }),
    since: Timestamp,
    queued: Type.Integer({ minimum: 0, description: 'How many failed deliveries were sent again' }),
  },
  { additionalProperties: false },
);

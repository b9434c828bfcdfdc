import { EVENT_CATALOG } from './event-types.js';

type Json = Record<string, unknown>;

/** `deposit.credited` → `DepositCreditedEvent`: the component name of a type's payload. */
export function eventSchemaName(type: string): string {
  return `${type
    .split('.')
    .map((part) => part[0]?.toUpperCase() + part.slice(1))
    .join('')}Event`;
}

/**
 * The account events as the OpenAPI 3.1 document lists them (docs/webhooks.md#event-catalog): one
 * `webhooks` entry per catalog type, a POST whose body is the payload `{ id, type, createdAt, mode,
 * data }`, each payload a named schema (`DepositCreditedEvent`…) so clients get a type per event.
 */
export function accountEventsDocument(): { webhooks: Json; schemas: Json } {
  const webhooks: Json = {};
  const schemas: Json = {};
  for (const [type, { description, data }] of Object.entries(EVENT_CATALOG)) {
    const name = eventSchemaName(type);
    schemas[name] = {
      type: 'object',
      description,
      required: ['id', 'type', 'createdAt', 'mode', 'data'],
      additionalProperties: false,
      properties: {
        id: { type: 'string', pattern: '^evt_[1-9A-HJ-NP-Za-km-z]{24}$', description: 'The event id' },
        type: { type: 'string', const: type },
        createdAt: { type: 'string', format: 'date-time' },
        mode: { type: 'string', enum: ['live', 'sandbox'] },
        data: JSON.parse(JSON.stringify(data)),
      },
    };
    webhooks[type] = {
      post: {
        operationId: `${name[0]?.toLowerCase()}${name.slice(1)}`,
        summary: description,
        description:
          'Posted to each enabled endpoint of the account subscribed to this type, signed with the endpoint’s ' +
          'secret (Standard Webhooks headers; docs/webhooks.md#account-events).',
        tags: ['webhooks'],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { $ref: `#/components/schemas/${name}` } } },
        },
        responses: {
          '200': { description: 'Any 2xx: received. 410 stops the delivery; anything else is retried.' },
        },
      },
    };
  }
  return { webhooks, schemas };
}

import { createHash } from 'node:crypto';
import { encodeBase58 } from '../../src/lib/base58.js';

/** Builders of ingestion events for tests: valid by default, each field overridable. */

/** A deterministic, valid Solana address per name. */
export function wallet(name: string): string {
  return encodeBase58(createHash('sha256').update(`wallet:${name}`).digest());
}

let counter = 0;
function nextId(prefix: string): string {
  counter += 1;
  return `${prefix}-${process.pid}-${counter}`;
}

export type Event = Record<string, unknown>;

export function ndjson(events: Event[]): string {
  return `${events.map((e) => JSON.stringify(e)).join('\n')}\n`;
}

export function marketCreated(
  market: Record<string, unknown> & { id: string },
  options: { at?: string; id?: string; sandbox?: boolean } = {},
): Event {
  return {
    id: options.id ?? nextId('ev-created'),
    type: 'market.created',
    at: options.at ?? '2026-03-01T10:00:00Z',
    ...(options.sandbox === false ? {} : { sandbox: true }),
    market: {
      slug: market.id.toLowerCase().replace(/[^a-z0-9]+/g, '-'),
      title: `Market ${market.id}`,
      description: 'A test market',
      category: 'crypto',
      imageUrl: 'https://example.com/m.png',
      marketType: 'BINARY',
      outcomes: ['Yes', 'No'],
      closesAt: '2026-12-31T00:00:00Z',
      feeBps: 200,
      lockPeriodSeconds: 86_400,
      creator: { wallet: wallet('creator'), username: 'creator' },
      resolution: { type: 'AI' },
      ...market,
    },
  };
}

export function event(type: string, at: string, fields: Record<string, unknown>, id?: string): Event {
  return { id: id ?? nextId(type), type, at, ...fields };
}

import Type from 'typebox';
import { MAX_BATCH_SYMBOLS, SinglePriceResult } from '../prices/index.js';

export const PRICE_EVENT_ID_PATTERN = '^p\\.[0-9]{1,16}\\.[0-9]{1,12}$';

export const StreamPricesQuery = Type.Object(
  {
    symbols: Type.String({
      minLength: 1,
      maxLength: 4096,
      description: `Symbols or mint addresses, comma-separated: 1 to ${MAX_BATCH_SYMBOLS}, as the batch takes them`,
      examples: ['SOL,JUP,BONK'],
    }),
  },
  { additionalProperties: false },
);

export const PriceStreamHeaders = Type.Object({
  'last-event-id': Type.Optional(
    Type.String({
      pattern: PRICE_EVENT_ID_PATTERN,
      description:
        'The id of the last event received (EventSource sends it when it reconnects): the stream resumes with the current prices',
    }),
  ),
});

const { attestation: _attestation, ...priceProperties } = SinglePriceResult.properties;

/** `event: price`: the single price of GET /price/{symbolOrMint}, without its cost fields (nor an attestation). */
export const PriceStreamEvent = Type.Object(
  { ...priceProperties },
  {
    description:
      'The data of each `event: price`: a symbol’s current VWAP, as GET /price/{symbolOrMint} answers it without `costUsd` and `remainingBalanceUsd`',
  },
);

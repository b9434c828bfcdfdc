import { type Clock, systemClock } from '../../lib/clock.js';
import type { PriceTarget } from '../tokens.js';
import { type PriceVenue, VenueError, type VenueQuote, type VenueSettings } from '../types.js';
import { fieldReaders, isRecord, venueGet } from './http.js';

const INTEGER = /^-?\d+$/;

const { badResponse } = fieldReaders('pyth');

/**
 * price × 10^expo. Letting Number parse the decimal "<price>e<expo>" rounds the exact value once,
 * whereas multiplying by 10 ** expo (itself inexact for negative powers) rounds twice:
 * 14250000063 * 10 ** -8 is 142.50000063000002, "14250000063e-8" is 142.50000063.
 */
function scaledPrice(price: string, expo: number): number {
  return Number(`${price}e${expo}`);
}

/** The feed's price from a Hermes `parsed` entry. */
function readPrice(entry: Record<string, unknown>): VenueQuote {
  const price = entry.price;
  if (!isRecord(price)) throw badResponse('parsed entry has no price object');
  // Hermes sends the i64 mantissa as a string; a number would lose digits past 2^53.
  const mantissa = typeof price.price === 'number' ? String(price.price) : price.price;
  if (typeof mantissa !== 'string' || !INTEGER.test(mantissa)) throw badResponse('price is not an integer');
  const expo = price.expo;
  if (typeof expo !== 'number' || !Number.isInteger(expo) || Math.abs(expo) > 30) {
    throw badResponse('expo is not a small integer');
  }
  const publishTime = price.publish_time;
  if (typeof publishTime !== 'number' || !Number.isFinite(publishTime)) {
    throw badResponse('publish_time is not a number');
  }
  const usd = scaledPrice(mantissa, expo);
  if (!(usd > 0)) throw badResponse('price is not positive');
  return { price: usd, volume24hUsd: null, timestamp: new Date(publishTime * 1000) };
}

/** Pyth Hermes: the oracle's latest aggregate price. No volume, so a reference venue. */
export function createPythVenue(settings: VenueSettings, clock: Clock = systemClock): PriceVenue {
  const baseUrl = settings.baseUrl.replace(/\/+$/, '');

  return {
    name: 'pyth',
    role: 'reference',

    canPrice(target: PriceTarget): boolean {
      return Boolean(target.token?.markets.pyth);
    },

    async fetchQuote(target: PriceTarget, signal: AbortSignal): Promise<VenueQuote | null> {
      const feedId = target.token?.markets.pyth;
      if (!feedId) return null;
      const url = `${baseUrl}/v2/updates/price/latest?ids[]=${encodeURIComponent(feedId)}&parsed=true`;
      const response = await venueGet(url, {
        venue: 'pyth',
        timeoutMs: settings.timeoutMs,
        signal,
        acceptStatuses: [404],
        clock,
      });
      if (response.status === 404) {
        // Hermes errors are plain text, not JSON.
        if (response.text.startsWith('Price ids not found')) return null;
        throw new VenueError('pyth', 'upstream_error', `HTTP 404: ${response.text.slice(0, 200)}`);
      }
      const body = response.body;
      if (!isRecord(body) || !Array.isArray(body.parsed)) throw badResponse('body has no parsed array');
      // Hermes answers ids without 0x, in lower case.
      const wanted = feedId.replace(/^0x/i, '').toLowerCase();
      const entry = body.parsed.find(
        (e): e is Record<string, unknown> =>
          isRecord(e) && typeof e.id === 'string' && e.id.replace(/^0x/i, '').toLowerCase() === wanted,
      );
      if (!entry) throw badResponse('parsed has no entry for the requested feed');
      return readPrice(entry);
    },
  };
}

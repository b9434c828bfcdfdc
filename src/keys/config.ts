import Type from 'typebox';
import { defineSettings } from '../lib/settings.js';

/** The per-instance cache of key verifications and the revocation feed it follows. */
export const authCacheSettings = defineSettings(
  {
    AUTH_CACHE_TTL_MS: Type.Integer({ default: 60_000, minimum: 0 }),
    AUTH_CACHE_SYNC_MS: Type.Integer({ default: 1000, minimum: 100 }),
    AUTH_CACHE_MAX_ENTRIES: Type.Integer({ default: 10_000, minimum: 1 }),
  },
  (v) => ({ ttlMs: v.AUTH_CACHE_TTL_MS, syncMs: v.AUTH_CACHE_SYNC_MS, maxEntries: v.AUTH_CACHE_MAX_ENTRIES }),
);

export type AuthCacheSettings = ReturnType<typeof authCacheSettings.parse>;

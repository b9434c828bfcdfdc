import Type from 'typebox';
import { type Cidr, parseCidrList } from '../lib/ip.js';
import { ConfigError, defineSettings, listSetting } from '../lib/settings.js';

/** Who the client is behind proxies, rate limits, and browser access (docs/api.md). */
export const accessSettings = defineSettings(
  {
    TRUSTED_PROXIES: Type.String({ default: '' }),
    RATE_LIMIT_PER_SECOND: Type.Number({ default: 50, minimum: 0.001 }),
    RATE_LIMIT_BURST: Type.Integer({ default: 100, minimum: 1 }),
    RATE_LIMIT_MAX_PER_SECOND: Type.Number({ default: 500, minimum: 0.001 }),
    RATE_LIMIT_MAX_BURST: Type.Integer({ default: 1000, minimum: 1 }),
    CORS_MAX_AGE_SECONDS: Type.Integer({ default: 600, minimum: 0 }),
    AUTH_FAILURE_LIMIT_PER_SECOND: Type.Number({ default: 1, minimum: 0.001 }),
    AUTH_FAILURE_LIMIT_BURST: Type.Integer({ default: 20, minimum: 1 }),
    RATE_LIMIT_REDIS_TIMEOUT_MS: Type.Integer({ default: 250, minimum: 1, maximum: 60_000 }),
  },
  (v) => {
    const proxies = parseCidrList(listSetting(v.TRUSTED_PROXIES));
    const [bad] = proxies.problems;
    if (bad)
      throw new ConfigError(`Invalid configuration: TRUSTED_PROXIES entry "${bad.entry}" ${bad.error}`);
    const trustedProxies: Cidr[] = proxies.cidrs;
    return {
      /** Proxies whose X-Forwarded-For is believed (CIDR ranges). */
      trustedProxies,
      /** The rate limit of keys that set none. */
      defaultRateLimit: { perSecond: v.RATE_LIMIT_PER_SECOND, burst: v.RATE_LIMIT_BURST },
      /** The most a key may be given through the API. */
      ceilings: { maxPerSecond: v.RATE_LIMIT_MAX_PER_SECOND, maxBurst: v.RATE_LIMIT_MAX_BURST },
      corsMaxAgeSeconds: v.CORS_MAX_AGE_SECONDS,
      /** Failed authentications per client address: a bucket refilled at this rate. */
      authFailureLimit: { perSecond: v.AUTH_FAILURE_LIMIT_PER_SECOND, burst: v.AUTH_FAILURE_LIMIT_BURST },
      /** How long a rate-limit command to Redis may take before this instance uses its own bucket. */
      redisTimeoutMs: v.RATE_LIMIT_REDIS_TIMEOUT_MS,
    };
  },
);

export type AccessConfig = ReturnType<typeof accessSettings.parse>;

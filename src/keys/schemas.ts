import Type from 'typebox';
import { handlerRules, Timestamp, timestampRules, UsdString } from '../http/schemas.js';
import { formatUsd } from '../lib/money.js';
import type { RateLimitPolicy, UsageNow } from '../limits/index.js';
import { PERMISSIONS } from './permissions.js';
import { type ApiKeyRecord, isKeyActive } from './rows.js';
import { MAX_ALLOW_LIST_ENTRIES } from './settings.js';

export const PermissionName = Type.Enum(PERMISSIONS, { description: `One of: ${PERMISSIONS.join(', ')}` });

function UsagePeriod() {
  return Type.Object({
    periodStart: Type.String({ description: 'UTC date the period started' }),
    resetsAt: Timestamp,
    requests: Type.Integer(),
    spendUsd: UsdString,
  });
}

const keyProperties = {
  id: Type.String(),
  keyPrefix: Type.String({ description: 'The first 16 characters of the key, safe to display' }),
  name: Type.String(),
  permissions: Type.Array(PermissionName),
  isActive: Type.Boolean({ description: 'Neither revoked nor expired' }),
  expiresAt: Type.Optional(Timestamp),
  revokedAt: Type.Optional(Timestamp),
  allowedIps: Type.Array(Type.String()),
  ipRestrictionEnabled: Type.Boolean(),
  allowedOrigins: Type.Array(Type.String()),
  originRestrictionEnabled: Type.Boolean(),
  rotatedTo: Type.Optional(Type.String({ description: 'Rotated keys: the id of the key that replaces it' })),
  rotatedFrom: Type.Optional(Type.String({ description: 'The id of the key this one replaced' })),
  createdAt: Timestamp,
  lastUsedAt: Type.Optional(
    Type.String({
      description:
        'When the key last authenticated a request (paid or free), ISO 8601 UTC, to the minute; absent: never used',
      examples: ['2026-11-21T12:00:00.000Z'],
    }),
  ),
  rateLimit: Type.Object(
    {
      requestsPerSecond: Type.Number(),
      burst: Type.Integer(),
      isDefault: Type.Boolean({ description: 'True when the key uses the service default' }),
    },
    { description: 'The token bucket this key draws from: `burst` at once, then `requestsPerSecond`' },
  ),
  quotas: Type.Object(
    {
      dailyRequests: Type.Union([Type.Integer(), Type.Null()]),
      monthlyRequests: Type.Union([Type.Integer(), Type.Null()]),
      dailySpendUsd: Type.Union([UsdString, Type.Null()]),
      monthlySpendUsd: Type.Union([UsdString, Type.Null()]),
    },
    {
      description:
        'Billed requests and spend per UTC day and month; null = unlimited. Shared with rotated keys.',
    },
  ),
  usage: Type.Optional(
    Type.Object(
      { day: UsagePeriod(), month: UsagePeriod() },
      { description: 'Current-period usage; present on keys with a quota (in list and update answers)' },
    ),
  ),
};

export const ApiKey = Type.Object(keyProperties, { title: 'ApiKey', additionalProperties: false });

export const ApiKeyWithSecret = Type.Object(
  { ...keyProperties, key: Type.String({ description: 'The full secret key; shown once, never again' }) },
  { additionalProperties: false },
);

const V4 = '(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const H = '[0-9A-Fa-f]{1,4}';
/** An IPv6 address in any of its spellings (compressed, or ending in an IPv4 address). */
const V6 =
  `(?:(?:${H}:){7}${H}|(?:${H}:){1,7}:|(?:${H}:){1,6}:${H}|(?:${H}:){1,5}(?::${H}){1,2}|` +
  `(?:${H}:){1,4}(?::${H}){1,3}|(?:${H}:){1,3}(?::${H}){1,4}|(?:${H}:){1,2}(?::${H}){1,5}|` +
  `${H}:(?::${H}){1,6}|:(?:(?::${H}){1,7}|:)|(?:${H}:){6}${V4}|::(?:ffff(?::0{1,4})?:)?${V4})`;
/** A CIDR range: an address, then its prefix length (at most 32 for IPv4, 128 for IPv6). */
const IPV4_CIDR = `^${V4}/(?:3[0-2]|[12]?\\d)$`;
const IPV6_CIDR = `^${V6}/(?:12[0-8]|1[01]\\d|[1-9]?\\d)$`;

const AllowedIps = Type.Array(
  Type.String({
    maxLength: 64,
    description: 'An address or a CIDR range whose host bits are zero (10.0.0.0/8, not 10.0.0.1/8)',
    // An address, or a range: its prefix length at most 32 (IPv4) or 128 (IPv6), its host bits zero.
    ...handlerRules({
      anyOf: [{ format: 'ipv4' }, { format: 'ipv6' }, { pattern: IPV4_CIDR }, { pattern: IPV6_CIDR }],
    }),
  }),
  {
    maxItems: MAX_ALLOW_LIST_ENTRIES,
    description: 'IPv4/IPv6 addresses or CIDR ranges',
  },
);
const AllowedOrigins = Type.Array(
  Type.String({
    maxLength: 255,
    ...handlerRules({
      format: 'uri',
      pattern:
        '^https?://(?:\\*\\.)?[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*(?::[1-9]\\d{0,3})?$',
    }),
  }),
  {
    maxItems: MAX_ALLOW_LIST_ENTRIES,
    description: 'Browser origins such as https://app.example.com; https://*.example.com allows subdomains',
  },
);

/**
 * Printable text: control characters (NUL included) have no place in a name; the rule of outcome
 * labels for the rest (resolveKeyName): invisible code points alone are blank, bidirectional
 * controls are refused.
 */
const KeyName = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: '^[^\\u0000-\\u001f\\u007f]+$',
  description:
    'Printable text, not blank. Spaces and invisible characters (zero-width spaces and joiners, a ' +
    'byte-order mark, …: Unicode default-ignorable code points) at either end are removed; a name ' +
    'with nothing else is blank. Bidirectional controls (U+061C, U+200E, U+200F, U+202A–U+202E, ' +
    'U+2066–U+2069) are refused. Both: 400 VALIDATION_ERROR on `body.name`.',
  ...handlerRules({
    allOf: [
      { pattern: '\\S' },
      { not: { pattern: '[\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069]' } },
    ],
  }),
});

const RateLimitInput = Type.Union(
  [
    Type.Object(
      {
        requestsPerSecond: Type.Number({
          minimum: 0.001,
          description: 'At least 0.001 (one per 1,000 s); at most the deployment’s RATE_LIMIT_MAX_PER_SECOND',
          ...handlerRules({ maximum: '$RATE_LIMIT_MAX_PER_SECOND' }),
        }),
        burst: Type.Integer({
          minimum: 1,
          description: 'At most the deployment’s RATE_LIMIT_MAX_BURST',
          ...handlerRules({ maximum: '$RATE_LIMIT_MAX_BURST' }),
        }),
      },
      { additionalProperties: false },
    ),
    Type.Null(),
  ],
  { description: "This key's token bucket; null returns it to the service default" },
);

const QuotaCount = Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: 1e15 }), Type.Null()]));
const QuotaSpend = Type.Optional(
  Type.Union([
    Type.String({
      maxLength: 32,
      description: 'A USD amount: up to 12 digits, then up to 6 decimals ("25", "25.00")',
      ...handlerRules({ pattern: '^\\d{1,12}(?:\\.\\d{1,6})?$' }),
    }),
    Type.Null(),
  ]),
);

/** A restriction switched on needs a list to enforce (resolveRestrictions): stated for the document. */
const RESTRICTIONS_NEED_ENTRIES = handlerRules({
  allOf: (['Ip', 'Origin'] as const).map((kind) => ({
    if: {
      required: [`${kind.toLowerCase()}RestrictionEnabled`],
      properties: { [`${kind.toLowerCase()}RestrictionEnabled`]: { const: true } },
    },
    // biome-ignore lint/suspicious/noThenProperty: `then` is the JSON Schema keyword
    then: {
      required: [`allowed${kind}s`],
      properties: { [`allowed${kind}s`]: { minItems: 1 } },
    },
  })),
});

/**
 * An update may turn a restriction on and rely on the stored list (the handler checks the list the
 * key ends with): only a list given with it must not be empty.
 */
const UPDATE_RESTRICTIONS = handlerRules({
  allOf: (['Ip', 'Origin'] as const).map((kind) => ({
    if: {
      required: [`${kind.toLowerCase()}RestrictionEnabled`],
      properties: { [`${kind.toLowerCase()}RestrictionEnabled`]: { const: true } },
    },
    // biome-ignore lint/suspicious/noThenProperty: `then` is the JSON Schema keyword
    then: { properties: { [`allowed${kind}s`]: { minItems: 1 } } },
  })),
});

const ExpiresAt = Type.String({
  maxLength: 64,
  description: 'ISO 8601 with a zone, in the future',
  ...timestampRules(),
});

const QuotasInputSchema = Type.Object(
  {
    dailyRequests: QuotaCount,
    monthlyRequests: QuotaCount,
    dailySpendUsd: QuotaSpend,
    monthlySpendUsd: QuotaSpend,
  },
  {
    additionalProperties: false,
    description: 'Each quota given replaces the current one; null removes it; one left out is kept',
  },
);

export const CreateKeyBody = Type.Object(
  {
    name: KeyName,
    permissions: Type.Optional(
      Type.Array(PermissionName, {
        minItems: 1,
        maxItems: PERMISSIONS.length,
        description:
          "Cannot exceed the calling key's. Left out: the calling key's own, `keys` included when it has it " +
          '(for compatibility; in the dashboard and the CLI, every permission). `keys` can make keys and read ' +
          'the webhook signing secret: give it only to a key that manages keys',
      }),
    ),
    expiresAt: Type.Optional(Type.Union([ExpiresAt, Type.Null()], { description: 'null: never' })),
    allowedIps: Type.Optional(AllowedIps),
    ipRestrictionEnabled: Type.Optional(
      Type.Boolean({ description: 'Defaults to true when allowedIps is given' }),
    ),
    allowedOrigins: Type.Optional(AllowedOrigins),
    originRestrictionEnabled: Type.Optional(
      Type.Boolean({ description: 'Defaults to true when allowedOrigins is given' }),
    ),
    rateLimit: Type.Optional(RateLimitInput),
    quotas: Type.Optional(QuotasInputSchema),
  },
  { title: 'CreateKeyRequest', additionalProperties: false, ...RESTRICTIONS_NEED_ENTRIES },
);

export const UpdateKeyBody = Type.Object(
  {
    name: Type.Optional(KeyName),
    permissions: Type.Optional(Type.Array(PermissionName, { minItems: 1, maxItems: PERMISSIONS.length })),
    expiresAt: Type.Optional(Type.Union([ExpiresAt, Type.Null()], { description: 'null: never' })),
    allowedIps: Type.Optional(AllowedIps),
    ipRestrictionEnabled: Type.Optional(
      Type.Boolean({
        description:
          'true: the key answers only its allowedIps — the list given here, else the stored one, which ' +
          'must not be empty (400 VALIDATION_ERROR)',
      }),
    ),
    allowedOrigins: Type.Optional(AllowedOrigins),
    originRestrictionEnabled: Type.Optional(
      Type.Boolean({
        description:
          'true: the key answers only its allowedOrigins — the list given here, else the stored one, ' +
          'which must not be empty (400 VALIDATION_ERROR)',
      }),
    ),
    rateLimit: Type.Optional(RateLimitInput),
    quotas: Type.Optional(QuotasInputSchema),
  },
  { title: 'UpdateKeyRequest', additionalProperties: false, minProperties: 1, ...UPDATE_RESTRICTIONS },
);

export const KeyIdParams = Type.Object({
  keyId: Type.String({ pattern: '^[A-Za-z0-9_]{1,64}$', description: 'A key id, e.g. key_3kD9…' }),
});

export interface PresentOptions {
  defaultRateLimit: RateLimitPolicy;
  usage?: UsageNow | undefined;
}

const countOrNull = (n: bigint | null) => (n === null ? null : Number(n));
const usdOrNull = (n: bigint | null) => (n === null ? null : formatUsd(n));

export function presentKey(record: ApiKeyRecord, now: Date, options: PresentOptions) {
  const usagePeriod = (p: UsageNow['day']) => ({
    periodStart: p.periodStart,
    resetsAt: p.resetsAt.toISOString(),
    requests: Number(p.requests),
    spendUsd: formatUsd(p.spendMicros),
  });
  return {
    id: record.id,
    keyPrefix: record.keyPrefix,
    name: record.name,
    permissions: record.permissions,
    isActive: isKeyActive(record, now),
    ...(record.expiresAt ? { expiresAt: record.expiresAt.toISOString() } : {}),
    ...(record.revokedAt ? { revokedAt: record.revokedAt.toISOString() } : {}),
    allowedIps: record.allowedIps,
    ipRestrictionEnabled: record.ipRestrictionEnabled,
    allowedOrigins: record.allowedOrigins,
    originRestrictionEnabled: record.originRestrictionEnabled,
    ...(record.rotatedTo ? { rotatedTo: record.rotatedTo } : {}),
    ...(record.rotatedFrom ? { rotatedFrom: record.rotatedFrom } : {}),
    createdAt: record.createdAt.toISOString(),
    ...(record.lastUsedAt ? { lastUsedAt: record.lastUsedAt.toISOString() } : {}),
    rateLimit: {
      requestsPerSecond: record.rateLimit.perSecond ?? options.defaultRateLimit.perSecond,
      burst: record.rateLimit.burst ?? options.defaultRateLimit.burst,
      isDefault: record.rateLimit.perSecond === null && record.rateLimit.burst === null,
    },
    quotas: {
      dailyRequests: countOrNull(record.quotas.dailyRequests),
      monthlyRequests: countOrNull(record.quotas.monthlyRequests),
      dailySpendUsd: usdOrNull(record.quotas.dailySpendMicros),
      monthlySpendUsd: usdOrNull(record.quotas.monthlySpendMicros),
    },
    ...(options.usage
      ? { usage: { day: usagePeriod(options.usage.day), month: usagePeriod(options.usage.month) } }
      : {}),
  };
}

import Type from 'typebox';
import { Timestamp } from '../http/schemas.js';
import { type ApiKeyRecord, isKeyActive } from './keys.js';
import { PERMISSIONS } from './permissions.js';
import { MAX_ALLOW_LIST_ENTRIES } from './settings.js';

export const PermissionName = Type.Enum(PERMISSIONS, { description: `One of: ${PERMISSIONS.join(', ')}` });

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
};

export const ApiKey = Type.Object(keyProperties, { additionalProperties: false });

export const ApiKeyWithSecret = Type.Object(
  { ...keyProperties, key: Type.String({ description: 'The full secret key; shown once, never again' }) },
  { additionalProperties: false },
);

const AllowedIps = Type.Array(Type.String({ maxLength: 64 }), {
  maxItems: MAX_ALLOW_LIST_ENTRIES,
  description: 'IPv4/IPv6 addresses or CIDR ranges',
});
const AllowedOrigins = Type.Array(Type.String({ maxLength: 255 }), {
  maxItems: MAX_ALLOW_LIST_ENTRIES,
  description: 'Browser origins such as https://app.example.com; https://*.example.com allows subdomains',
});

export const CreateKeyBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    permissions: Type.Optional(
      Type.Array(PermissionName, {
        minItems: 1,
        maxItems: PERMISSIONS.length,
        description: "Defaults to the calling key's permissions, and cannot exceed them",
      }),
    ),
    expiresAt: Type.Optional(Type.Union([Type.String({ maxLength: 64 }), Type.Null()])),
    allowedIps: Type.Optional(AllowedIps),
    ipRestrictionEnabled: Type.Optional(
      Type.Boolean({ description: 'Defaults to true when allowedIps is given' }),
    ),
    allowedOrigins: Type.Optional(AllowedOrigins),
    originRestrictionEnabled: Type.Optional(
      Type.Boolean({ description: 'Defaults to true when allowedOrigins is given' }),
    ),
  },
  { additionalProperties: false },
);

export const KeyIdParams = Type.Object({ keyId: Type.String({ minLength: 1, maxLength: 64 }) });

export function presentKey(record: ApiKeyRecord, now: Date) {
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
  };
}

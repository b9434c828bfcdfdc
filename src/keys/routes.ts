import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import { defineRoute } from '../http/route.js';
import { createKey, listKeys, revokeKey, rotateKey } from './keys.js';
import { ApiKey, ApiKeyWithSecret, CreateKeyBody, KeyIdParams, presentKey } from './schemas.js';

export function keyRoutes(app: FastifyInstance): void {
  const { db, clock, authenticator } = app.services;

  defineRoute(app, {
    method: 'POST',
    url: '/keys',
    operationId: 'createKey',
    summary: 'Create an API key (the secret is returned once)',
    description:
      "Permissions default to, and may not exceed, the calling key's; the expiry may not exceed the calling key's. " +
      'An account holds at most 25 active keys.',
    tags: ['keys'],
    permission: 'keys',
    body: CreateKeyBody,
    response: ApiKeyWithSecret,
    errors: ['MAX_KEYS_EXCEEDED'],
    handler: async ({ body, principal }) => {
      const issued = await createKey(
        db,
        clock,
        {
          accountId: principal.accountId,
          permissions: [...principal.permissions],
          expiresAt: principal.expiresAt,
        },
        body,
      );
      return { ...presentKey(issued.record, clock.now()), key: issued.key };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/keys',
    operationId: 'listKeys',
    summary: "List the account's API keys (never their secrets)",
    tags: ['keys'],
    permission: 'keys',
    response: Type.Object({ keys: Type.Array(ApiKey), total: Type.Integer() }),
    handler: async ({ principal }) => {
      const now = clock.now();
      const keys = (await listKeys(db, principal.accountId)).map((k) => presentKey(k, now));
      return { keys, total: keys.length };
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/keys/:keyId/rotate',
    operationId: 'rotateKey',
    summary: 'Rotate a key: a new key with the same settings; the old one stays valid for 60 minutes',
    tags: ['keys'],
    permission: 'keys',
    params: KeyIdParams,
    response: Type.Object({
      newKey: ApiKeyWithSecret,
      oldKey: Type.Object(ApiKey.properties, {
        description: 'The rotated key; its expiresAt marks the end of the grace period',
      }),
    }),
    errors: ['NOT_FOUND', 'KEY_ROTATION_IN_PROGRESS'],
    handler: async ({ params, principal }) => {
      const { newKey, oldKey } = await rotateKey(db, clock, principal.accountId, params.keyId);
      authenticator.cache.evictAccount(principal.accountId);
      const now = clock.now();
      return {
        newKey: { ...presentKey(newKey.record, now), key: newKey.key },
        oldKey: presentKey(oldKey, now),
      };
    },
  });

  defineRoute(app, {
    method: 'DELETE',
    url: '/keys/:keyId',
    operationId: 'revokeKey',
    summary: 'Revoke a key at once',
    tags: ['keys'],
    permission: 'keys',
    params: KeyIdParams,
    response: ApiKey,
    errors: ['NOT_FOUND'],
    handler: async ({ params, principal }) => {
      const revoked = await revokeKey(db, clock, principal.accountId, params.keyId);
      authenticator.cache.evictAccount(principal.accountId);
      return presentKey(revoked, clock.now());
    },
  });
}

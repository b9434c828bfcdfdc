import Type from 'typebox';
import {
  ApiKey,
  ApiKeyWithSecret,
  type Authenticator,
  accountOwner,
  CreateKeyBody,
  createKey,
  KeyIdParams,
  listKeys,
  presentKey,
  presentKeys,
  revokeKey,
  rotateKey,
  UpdateKeyBody,
  updateKey,
} from '../../keys/index.js';
import type { AccessConfig } from '../../limits/index.js';
import { type DashboardEdge, defineDashboardRoute } from './define.js';

/**
 * The account's API keys, managed by its owner through the API's own verbs: the wallet acts as the
 * operator does (any permission), and every rule of the verbs — 25 active keys, the rotation grace
 * period, the allow lists' and limits' validation — applies unchanged.
 */
export function keyRoutes(
  edge: DashboardEdge,
  deps: { authenticator: Authenticator; access: AccessConfig },
): void {
  const { db, clock } = edge.app.services;
  const defaultRateLimit = deps.access.defaultRateLimit;
  const policy = { ceilings: deps.access.ceilings, defaultRateLimit };
  const present = async (record: Parameters<typeof presentKey>[0]) =>
    (await presentKeys(db, clock.now(), defaultRateLimit, [record]))[0] as ReturnType<typeof presentKey>;

  defineDashboardRoute(edge, {
    scope: 'account',
    method: 'GET',
    url: '/keys',
    operationId: 'listKeys',
    summary: 'The account’s API keys, with quota usage (never their secrets)',
    response: Type.Object({ keys: Type.Array(ApiKey), total: Type.Integer() }),
    handler: async ({ account }) => {
      const keys = await presentKeys(db, clock.now(), defaultRateLimit, await listKeys(db, account.id));
      return { keys, total: keys.length };
    },
  });

  defineDashboardRoute(edge, {
    scope: 'account',
    method: 'POST',
    url: '/keys',
    operationId: 'createKey',
    summary: 'Creates an API key with any permission and settings; the secret is answered once',
    body: CreateKeyBody,
    response: ApiKeyWithSecret,
    errors: ['MAX_KEYS_EXCEEDED'],
    handler: async ({ account, body, ctx }) => {
      const issued = await createKey(ctx, { actor: accountOwner(account.id), settings: body, policy });
      return { ...presentKey(issued.record, clock.now(), { defaultRateLimit }), key: issued.key };
    },
  });

  defineDashboardRoute(edge, {
    scope: 'account',
    method: 'PATCH',
    url: '/keys/:keyId',
    operationId: 'updateKey',
    summary: 'Changes a key’s name, permissions, expiry, allow lists, rate limit or quotas',
    params: KeyIdParams,
    body: UpdateKeyBody,
    response: ApiKey,
    errors: ['NOT_FOUND', 'MAX_KEYS_EXCEEDED'],
    handler: async ({ account, params, body, ctx }) => {
      const actor = accountOwner(account.id);
      const updated = await updateKey(ctx, { actor, keyId: params.keyId, settings: body, policy });
      deps.authenticator.cache.evictAccount(account.id);
      return present(updated);
    },
  });

  defineDashboardRoute(edge, {
    scope: 'account',
    method: 'POST',
    url: '/keys/:keyId/rotate',
    operationId: 'rotateKey',
    summary: 'Rotates a key: a new key with the same settings; the old one stays valid for 60 minutes',
    params: KeyIdParams,
    response: Type.Object({ newKey: ApiKeyWithSecret, oldKey: ApiKey }),
    errors: ['NOT_FOUND', 'KEY_ROTATION_IN_PROGRESS', 'MAX_KEYS_EXCEEDED'],
    handler: async ({ account, params, ctx }) => {
      const actor = accountOwner(account.id);
      const { newKey, oldKey } = await rotateKey(ctx, { actor, keyId: params.keyId, policy });
      deps.authenticator.cache.evictAccount(account.id);
      const now = clock.now();
      return {
        newKey: { ...presentKey(newKey.record, now, { defaultRateLimit }), key: newKey.key },
        oldKey: presentKey(oldKey, now, { defaultRateLimit }),
      };
    },
  });

  defineDashboardRoute(edge, {
    scope: 'account',
    method: 'DELETE',
    url: '/keys/:keyId',
    operationId: 'revokeKey',
    summary: 'Revokes a key at once',
    params: KeyIdParams,
    response: ApiKey,
    errors: ['NOT_FOUND'],
    handler: async ({ account, params, ctx }) => {
      const revoked = await revokeKey(ctx, { actor: accountOwner(account.id), keyId: params.keyId });
      deps.authenticator.cache.evictAccount(account.id);
      return presentKey(revoked, clock.now(), { defaultRateLimit });
    },
  });
}

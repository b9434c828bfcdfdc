import type { FastifyInstance } from 'fastify';
import Type from 'typebox';
import { type Context, queryable } from '../context.js';
import { type Caller, defineAccountRoute } from '../http/account-route.js';
import { formatCidr } from '../lib/ip.js';
import type { AccessConfig, RateLimitPolicy } from '../limits/index.js';
import type { Authenticator, Principal } from './authenticate.js';
import { createKey, revokeKey, rotateKey, updateKey } from './management.js';
import { accountOwner, type KeyActor } from './policy.js';
import { presentKeys } from './present.js';
import { type ApiKeyRecord, listKeys } from './rows.js';
import {
  ApiKey,
  ApiKeyWithSecret,
  CreateKeyBody,
  KeyIdParams,
  presentKey,
  UpdateKeyBody,
} from './schemas.js';
import { keyBodyRules } from './settings.js';

/**
 * Who manages the keys: the calling key, bounded by its permissions, expiry, restrictions and limits;
 * or, in the dashboard, the account's owner, bounded by nothing but the account's own rules.
 */
function actorOf(caller: Caller, defaults: RateLimitPolicy): KeyActor {
  return caller.key ? keyActor(caller.key, defaults) : accountOwner(caller.accountId);
}

function keyActor(principal: Principal, defaults: RateLimitPolicy): KeyActor {
  const v = principal.verification;
  return {
    accountId: principal.accountId,
    permissions: [...principal.permissions],
    expiresAt: principal.expiresAt,
    bounds: {
      lineageId: v.lineageId,
      rateLimitBucket: v.rateLimitBucket,
      allowedIps: v.ipRestrictionEnabled ? v.allowedIps.map(formatCidr) : null,
      allowedOrigins: v.originRestrictionEnabled ? [...v.allowedOrigins] : null,
      rateLimit: {
        perSecond: v.rateLimit.perSecond ?? defaults.perSecond,
        burst: v.rateLimit.burst ?? defaults.burst,
      },
      ownRateLimit: v.rateLimit,
      quotas: v.quotas,
    },
  };
}

export function keyRoutes(
  app: FastifyInstance,
  deps: { authenticator: Authenticator; access: AccessConfig },
): void {
  const { authenticator, access } = deps;
  const defaultRateLimit = access.defaultRateLimit;
  const policy = { ceilings: access.ceilings, defaultRateLimit };

  /** Keys as answered, with current usage for those that have a quota. */
  const present = (ctx: Context, records: ApiKeyRecord[]) => presentKeys(ctx, defaultRateLimit, records);

  defineAccountRoute(app, {
    method: 'POST',
    url: '/keys',
    operationId: 'createKey',
    responseName: 'CreatedKey',
    summary: 'Create an API key (the secret is returned once)',
    description:
      "Permissions may not exceed the calling key's. Without `permissions`, the new key gets the calling key's " +
      'own — `keys` included when the calling key has it (the default is kept for compatibility): name the ' +
      'permissions a key needs, since `keys` lets a key make keys and read the webhook signing secret. The ' +
      "expiry may not exceed the calling key's. An account holds at most 25 active keys.",
    tags: ['keys'],
    permission: 'keys',
    body: CreateKeyBody,
    bodyRules: keyBodyRules,
    response: ApiKeyWithSecret,
    errors: ['MAX_KEYS_EXCEEDED'],
    handler: async ({ body, caller, ctx }) => {
      const actor = actorOf(caller, defaultRateLimit);
      const issued = await createKey(ctx, { actor, settings: body, policy });
      return { ...presentKey(issued.record, ctx.clock.now(), { defaultRateLimit }), key: issued.key };
    },
  });

  defineAccountRoute(app, {
    method: 'GET',
    url: '/keys',
    operationId: 'listKeys',
    responseName: 'ApiKeyList',
    summary: "List the account's API keys (never their secrets), with quota usage",
    tags: ['keys'],
    permission: 'keys',
    response: Type.Object({ keys: Type.Array(ApiKey), total: Type.Integer() }),
    handler: async ({ caller, ctx }) => {
      const keys = await present(ctx, await listKeys(queryable(ctx), caller.accountId));
      return { keys, total: keys.length };
    },
  });

  defineAccountRoute(app, {
    method: 'PATCH',
    url: '/keys/:keyId',
    operationId: 'updateKey',
    summary: "Change a key's name, permissions, expiry, allow lists, rate limit or quotas",
    description:
      'Fields left out keep their value. Permissions and expiry are bounded by the calling key, which can only ' +
      'change keys that have no permission it lacks. Takes effect on every instance within a second.',
    tags: ['keys'],
    permission: 'keys',
    params: KeyIdParams,
    body: UpdateKeyBody,
    bodyRules: keyBodyRules,
    response: ApiKey,
    // Extending an expired key's expiry makes it active again: it must fit under the 25.
    errors: ['NOT_FOUND', 'MAX_KEYS_EXCEEDED'],
    handler: async ({ params, body, caller, ctx }) => {
      const actor = actorOf(caller, defaultRateLimit);
      const updated = await updateKey(ctx, { actor, keyId: params.keyId, settings: body, policy });
      authenticator.cache.evictAccount(caller.accountId);
      const [presented] = await present(ctx, [updated]);
      return presented as NonNullable<typeof presented>;
    },
  });

  defineAccountRoute(app, {
    method: 'POST',
    url: '/keys/:keyId/rotate',
    operationId: 'rotateKey',
    summary: 'Rotate a key: a new key with the same settings; the old one stays valid for 60 minutes',
    description:
      'The old key counts towards the 25 active keys until its grace period ends, so the account needs room for one more.',
    tags: ['keys'],
    permission: 'keys',
    params: KeyIdParams,
    response: Type.Object({
      newKey: ApiKeyWithSecret,
      oldKey: Type.Object(ApiKey.properties, {
        description: 'The rotated key; its expiresAt marks the end of the grace period',
      }),
    }),
    errors: ['NOT_FOUND', 'KEY_ROTATION_IN_PROGRESS', 'MAX_KEYS_EXCEEDED'],
    handler: async ({ params, caller, ctx }) => {
      const actor = actorOf(caller, defaultRateLimit);
      const { newKey, oldKey } = await rotateKey(ctx, { actor, keyId: params.keyId, policy });
      authenticator.cache.evictAccount(caller.accountId);
      const now = ctx.clock.now();
      return {
        newKey: { ...presentKey(newKey.record, now, { defaultRateLimit }), key: newKey.key },
        oldKey: presentKey(oldKey, now, { defaultRateLimit }),
      };
    },
  });

  defineAccountRoute(app, {
    method: 'DELETE',
    url: '/keys/:keyId',
    operationId: 'revokeKey',
    summary: 'Revoke a key at once',
    tags: ['keys'],
    permission: 'keys',
    params: KeyIdParams,
    response: ApiKey,
    errors: ['NOT_FOUND'],
    handler: async ({ params, caller, ctx }) => {
      const actor = actorOf(caller, defaultRateLimit);
      const revoked = await revokeKey(ctx, { actor, keyId: params.keyId });
      authenticator.cache.evictAccount(caller.accountId);
      return presentKey(revoked, ctx.clock.now(), { defaultRateLimit });
    },
  });
}

import type { FastifyInstance } from 'fastify';
import type { Static } from 'typebox';
import type { Database } from '../db/database.js';
import { API_PREFIX, errorResponses } from '../http/route.js';
import type { Attestations } from './attestor.js';
import { ATTESTATION_VERSION } from './layout.js';
import { listKeys } from './registry.js';
import { AttestationKeys } from './schemas.js';

/** GET /attestation/keys: the published keys, for anyone, free, no key (docs/attestations.md#keys). */
export function attestationRoutes(
  app: FastifyInstance,
  deps: { db: Database; attestations: Attestations },
): void {
  app.get(
    `${API_PREFIX}/attestation/keys`,
    {
      schema: {
        operationId: 'getAttestationKeys',
        summary: 'The public keys that sign attestations: current (live, sandbox) and retired',
        description:
          'Public, free, no key needed. Verify an answer’s `attestation` against the key of its mode; a retired ' +
          'key still verifies what it signed before its `retiredAt` (docs/attestations.md#keys).',
        tags: ['attestations'],
        security: [],
        // What it can answer besides its list: a database that does not answer (500, nothing
        // internal said), and the 503 of an instance shutting down (http/edge.ts).
        response: { 200: AttestationKeys, ...errorResponses(['INTERNAL_ERROR', 'SERVICE_UNAVAILABLE']) },
      },
    },
    async (): Promise<Static<typeof AttestationKeys>> => {
      // One view: the current keys are those the list names current, whatever this process holds;
      // `enabled` says whether this process signs with them (docs/attestations.md#rotation).
      // In turn: a first load lists this process's keys before they are read.
      const enabled = await deps.attestations.signing();
      const keys = await listKeys(deps.db);
      const current = (mode: 'live' | 'sandbox') =>
        keys.find((key) => key.mode === mode && key.retiredAt === null)?.publicKey ?? null;
      return {
        enabled,
        version: ATTESTATION_VERSION,
        live: current('live'),
        sandbox: current('sandbox'),
        keys,
      };
    },
  );
}

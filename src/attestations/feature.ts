/** Attestations' descriptor (src/feature.ts): the key setting, GET /attestation/keys, `sibyl attestation`. */
import type { Feature } from '../feature.js';
import type { Attestations } from './attestor.js';
import { type AttestationConfig, attestationSettings } from './config.js';

export interface Needs {
  config: { attestations: AttestationConfig };
  ports: { attestations: Attestations };
}

export const attestationsFeature: Feature<{ attestations: typeof attestationSettings }, Needs> = {
  name: 'attestations',
  tables: ['attestation_keys'],
  settings: { attestations: attestationSettings },
  async api(app, { db, ports }) {
    const { attestationRoutes } = await import('./routes.js');
    attestationRoutes(app, { db, attestations: ports.attestations });
  },
  commands: {
    attestation: {
      usage: [
        '  attestation keys                        the attestation keys: current (live, sandbox) and retired',
        '  attestation rotate                      retire the current keys; the next: a new key file, or',
        '                                          ATTESTATION_SECRET_KEY set to the new key',
        '  attestation rotate --compromised         the same, and nothing the retired keys signed verifies',
        '  attestation revoke PUBLIC_KEY           mark a retired key (and its pair) compromised',
      ],
      async run(io, action, args) {
        const { attestationCommand } = await import('./cli.js');
        return attestationCommand(io, action, args);
      },
    },
  },
};

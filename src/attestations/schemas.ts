import Type from 'typebox';

/** What an answer gains when it is signed (docs/attestations.md#the-attestation). */
export const AttestationSchema = Type.Object(
  {
    message: Type.String({ description: 'The signed message, base64 (docs/attestations.md#the-message)' }),
    signature: Type.String({ description: 'Ed25519 signature of the message, base64' }),
    publicKey: Type.String({ description: 'The signing key, base58 (GET /attestation/keys lists it)' }),
    version: Type.Integer({
      description: 'The layout version of the message (its byte 5): 1 for a price, 2 for a resolution',
      minimum: 1,
    }),
  },
  { title: 'Attestation', description: 'Sibyl’s Ed25519 signature over the answer (docs/attestations.md)' },
);

const KeyEntry = Type.Object({
  publicKey: Type.String({ description: 'base58' }),
  mode: Type.Union([Type.Literal('live'), Type.Literal('sandbox')]),
  createdAt: Type.String({ format: 'date-time' }),
  retiredAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description:
      'When a rotation retired it; null: current. Unless compromised, what it signed before still verifies.',
  }),
  compromisedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description:
      'When it was declared compromised (`sibyl attestation rotate --compromised` or `revoke`): nothing it ' +
      'signed verifies any more, whatever time its message states; null: not compromised',
  }),
});

export const AttestationKeys = Type.Object(
  {
    enabled: Type.Boolean({
      description:
        'false: the instance that answered signs nothing — attestations are off (PostgreSQL without ' +
        'ATTESTATION_SECRET_KEY), or a rotation retired its key and it waits for a restart with the new one',
    }),
    version: Type.Integer({
      description: 'The newest message layout version signed: prices are version 1, resolutions version 2',
    }),
    live: Type.Union([Type.String(), Type.Null()], {
      description: 'The current live public key, base58, as `keys` lists it; null: none listed',
    }),
    sandbox: Type.Union([Type.String(), Type.Null()], {
      description: 'The current sandbox public key, base58: a sandbox attestation never verifies as live',
    }),
    keys: Type.Array(KeyEntry, { description: 'Every key, current and retired, newest first' }),
  },
  { title: 'AttestationKeys' },
);

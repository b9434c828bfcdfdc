import { api, type Mode, ok } from '../api';
import { Card, ErrorNote } from '../components/ui';
import { useData } from '../data';

/**
 * The public key that signs this mode's answers (docs/attestations.md#keys): what a builder puts in
 * a Solana program or passes to `verifyAttestation`. Public, from GET /api/v1/attestation/keys; the
 * secret half never leaves the service.
 */
export function AttestationKey({ mode }: { mode: Mode }) {
  const keys = useData(() => ok(api.GET('/api/v1/attestation/keys')), []);
  const current = keys.data ? keys.data[mode] : null;
  return (
    <Card title="Attestation key">
      <ErrorNote error={keys.error} />
      {keys.data && !keys.data.enabled && (
        <p class="muted">This service does not sign its answers (no attestation key is configured).</p>
      )}
      {current && (
        <>
          <p>
            {mode === 'live' ? 'Live' : 'Sandbox'} answers with <code>attest=true</code>, AI resolutions and
            scheduled checks are signed by this Ed25519 key (version {keys.data?.version}):
          </p>
          <p>
            <code class="key">{current}</code>
          </p>
          <p class="muted">
            Verify with <code>verifyAttestation</code> from @sibyl/client, or on chain through the Ed25519
            program; see the <a href="/docs/guides/attestations.md">attestations guide</a>.
          </p>
        </>
      )}
    </Card>
  );
}

import type { CommandIo } from '../feature.js';
import { systemClock } from '../lib/clock.js';
import { type CommandArgs, required, UsageError } from '../lib/command-line.js';
import type { AttestationConfig } from './config.js';
import { listKeys, markCompromised, rotateKeys } from './registry.js';

/** `sibyl attestation keys | rotate` (docs/attestations.md#rotation). Public keys only, never the secret. */
export async function attestationCommand(
  io: CommandIo<{ attestations: AttestationConfig }>,
  action: string,
  args: CommandArgs,
): Promise<boolean> {
  const db = await io.database();
  if (action === 'keys') {
    const keys = await listKeys(db);
    const lines = keys.map(
      (k) =>
        `${k.mode.padEnd(8)} ${k.publicKey}  ${k.retiredAt ? `retired ${k.retiredAt}` : 'current'}` +
        (k.compromisedAt ? `, compromised ${k.compromisedAt}` : ''),
    );
    io.out.result({ keys }, lines.length > 0 ? lines.join('\n') : 'No attestation key is listed yet.');
    return true;
  }
  if (action === 'rotate') {
    const compromised = args.options.compromised === true;
    const rotation = await rotateKeys(db, io.config.attestations, systemClock, { compromised });
    io.out.result(
      { ...rotation, compromised },
      [
        `${compromised ? 'Retired as compromised (nothing they signed verifies any more)' : 'Retired'}: ` +
          `${rotation.retired.join(', ') || 'none'}`,
        `Current live key: ${rotation.current.live}`,
        `Current sandbox key: ${rotation.current.sandbox}`,
      ].join('\n'),
    );
    return true;
  }
  if (action === 'revoke') {
    const marked = await markCompromised(db, required(args, 0, 'PUBLIC_KEY'), systemClock);
    io.out.result(
      { compromised: marked },
      marked.length > 0
        ? `Compromised (nothing they signed verifies any more): ${marked.join(', ')}`
        : 'Already marked compromised.',
    );
    return true;
  }
  throw new UsageError(`unknown action "attestation ${action}"`);
}

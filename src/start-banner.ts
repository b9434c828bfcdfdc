import type { CoreConfig } from './core-settings.js';
import { baseUrl } from './http/openapi.js';

/** Where a serving process can be reached: the same four addresses on every start. */
export interface Addresses {
  api: string;
  dashboard: string;
  reference: string;
  openapi: string;
}

export function addressesOf(config: Pick<CoreConfig, 'host' | 'port' | 'publicBaseUrl'>): Addresses {
  const base = baseUrl(config);
  return {
    api: `${base}/api/v1`,
    dashboard: `${base}/dashboard/`,
    reference: `${base}/docs`,
    openapi: `${base}/api/v1/openapi.json`,
  };
}

/**
 * What `sibyl start` prints on the embedded database once everything listens (docs/operations.md#first-start):
 * the starter account on a first start, or that this data directory was started before; local
 * development when it is on; then the addresses, every time. On PostgreSQL nothing is printed: the
 * addresses are fields of the `API listening` log line, since stdout carries the JSON logs there.
 */
export function startBanner(input: {
  config: Pick<CoreConfig, 'host' | 'port' | 'publicBaseUrl' | 'dataDir'>;
  /** The first start's lines (the starter account and its key); none on a later start. */
  welcome: string[] | null;
  /** The local-development lines, when it is on. */
  localDevelopment: string[];
  /** The attestation public keys (docs/attestations.md#keys); null when attestations are off. */
  attestationKeys?: { live: string; sandbox: string } | null;
  /** How many files and folders of the data directory were open to other users and made private. */
  madePrivate?: number;
}): string {
  const a = addressesOf(input.config);
  return [
    '',
    ...(input.welcome ?? [
      `  Sibyl is running on the embedded database in ${input.config.dataDir} (started before: its accounts,`,
      '  keys and balances are as they were; the first start printed the sandbox key).',
      '',
    ]),
    ...(input.madePrivate
      ? [
          `  The data directory was open to other users: ${input.madePrivate} files and folders in it are now`,
          "  its owner's only (folders 0700, files 0600).",
          '',
        ]
      : []),
    ...input.localDevelopment,
    `  API            ${a.api}`,
    `  Dashboard      ${a.dashboard}  (sign in with a Solana wallet)`,
    `  API reference  ${a.reference}`,
    `  OpenAPI        ${a.openapi}`,
    // Both keys, each named: a sandbox key's answers (the starter key's) are signed by the sandbox key.
    ...(input.attestationKeys
      ? [
          `  Attestations   live     ${input.attestationKeys.live}  (signs live accounts' answers)`,
          `                 sandbox  ${input.attestationKeys.sandbox}  (signs sandbox accounts' answers)`,
        ]
      : []),
    '',
    '',
  ].join('\n');
}

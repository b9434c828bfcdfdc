import Type from 'typebox';
import Value from 'typebox/value';
import { describe, expect, it } from 'vitest';
import { depositSettings, MAINNET_USDC_MINT } from '../../src/deposits/config.js';
import { ConfigError } from '../../src/lib/settings.js';

/** Parses an environment through the fragment the way src/config.ts will compose it. */
function parse(env: Record<string, string>) {
  const schema = Type.Object(depositSettings.env);
  const values = Value.Convert(schema, Value.Default(schema, { ...env }));
  if (!Value.Check(schema, values)) throw new Error(`schema refused ${JSON.stringify(env)}`);
  return depositSettings.parse(values);
}

const ADDRESS = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';

describe('deposit settings', () => {
  it('off by default, with the documented defaults', () => {
    expect(parse({})).toEqual({
      watch: null,
      depositAddress: null,
      usdcMint: MAINNET_USDC_MINT,
      pollMs: 5000,
      minUsdMicros: 1_000_000n,
      rpc: { timeoutMs: 10_000, maxAttempts: 5, batchSize: 100 },
    });
  });

  it('watches when given an RPC URL and the deposit address', () => {
    const config = parse({
      SOLANA_RPC_URL: 'https://rpc.example.com/?api-key=k',
      DEPOSIT_ADDRESS: ADDRESS,
      DEPOSIT_POLL_MS: '2000',
      DEPOSIT_MIN_USD: '0.5',
    });
    expect(config.watch).toEqual({ rpcUrl: 'https://rpc.example.com/?api-key=k', depositAddress: ADDRESS });
    expect([config.pollMs, config.minUsdMicros]).toEqual([2000, 500_000n]);
  });

  it('shows DEPOSIT_ADDRESS without watching when there is no RPC (the operator credits)', () => {
    expect(parse({ DEPOSIT_ADDRESS: ADDRESS })).toMatchObject({ watch: null, depositAddress: ADDRESS });
  });

  it('refuses an RPC without an address, and malformed values', () => {
    const refused: Record<string, string>[] = [
      { SOLANA_RPC_URL: 'https://rpc.example.com' },
      { SOLANA_RPC_URL: 'ftp://rpc.example.com', DEPOSIT_ADDRESS: ADDRESS },
      { SOLANA_RPC_URL: 'https://rpc.example.com', DEPOSIT_ADDRESS: 'not-base58-0OIl' },
      { USDC_MINT: 'short' },
      { DEPOSIT_MIN_USD: '-1' },
      { DEPOSIT_MIN_USD: '1.0000001' },
    ];
    for (const env of refused) expect(() => parse(env), JSON.stringify(env)).toThrow(ConfigError);
  });
});

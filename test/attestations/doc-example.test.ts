import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fixedPointValue, readPrice, sha256, verifies } from './helpers.js';

/** docs/attestations.md's worked example: a real answer, its bytes and fields as the document states them. */
const doc = readFileSync(new URL('../../docs/attestations.md', import.meta.url), 'utf8');

describe('the worked example of docs/attestations.md', () => {
  it('verifies, and its bytes and fields are what the document says', () => {
    const json = /## A worked example[\s\S]*?```json\n([\s\S]*?)```/.exec(doc)?.[1] ?? '';
    const hex = /The message's 94 bytes, in hex:\n\n```text\n([0-9a-f]+)\n```/.exec(doc)?.[1] ?? '';
    const attestation = JSON.parse(json) as { message: string; signature: string; publicKey: string };
    const message = Buffer.from(attestation.message, 'base64');
    expect(message.toString('hex')).toBe(hex);
    expect(verifies(attestation, attestation.publicKey)).toBe(true);
    const fields = readPrice(message);
    expect(fields).toMatchObject({
      magic: 'SIBYL',
      version: 1,
      kind: 1,
      mode: 'sandbox',
      sources: 3,
      valid: true,
    });
    expect(new Date(fields.timeMs).toISOString()).toBe('2026-11-28T05:03:34.214Z');
    expect(fields.asset.equals(sha256('SOL'))).toBe(true);
    expect([fields.price, fields.exponent]).toEqual([15_041_029_587n, -8]);
    expect(fixedPointValue(fields.price, fields.exponent)).toBe(150.41029587);
    expect(doc).toContain('| 1795842214214 ms: 2026-11-28T05:03:34.214Z');
  });
});

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { evidenceDigest, fixedPointValue, readPrice, readResolution, sha256, verifies } from './helpers.js';

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

  it('the resolution (version 2): verifies, and its bytes, fields and evidence digest are what the document says', () => {
    const section = /## A worked example of a resolution \(version 2\)([\s\S]*?)\n## /.exec(doc)?.[1] ?? '';
    const json = /```json\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
    const [evidenceText = '', hex = ''] = [...section.matchAll(/```text\n(.*)\n```/g)].map((m) => m[1] ?? '');
    const attestation = JSON.parse(json) as {
      message: string;
      signature: string;
      publicKey: string;
      version: number;
    };
    const message = Buffer.from(attestation.message, 'base64');
    expect(message.toString('hex')).toBe(hex);
    expect(message.length).toBe(150);
    expect(attestation.version).toBe(2);
    expect(verifies(attestation, attestation.publicKey)).toBe(true);
    const fields = readResolution(message);
    expect(fields).toMatchObject({
      magic: 'SIBYL',
      version: 2,
      kind: 2,
      mode: 'sandbox',
      outcome: 0,
      confidenceBp: 8700,
      agreeing: 3,
      models: 4,
      canDetermine: true,
    });
    expect(new Date(fields.timeMs).toISOString()).toBe('2026-12-01T00:05:12.345Z');
    expect(doc).toContain('| 1796083512345 ms: 2026-12-01T00:05:12.345Z');
    expect(fields.requestIdHash.equals(sha256('ai_7Yq2mB9xKp4Lw1Rz'))).toBe(true);
    const question = JSON.stringify(['Will SOL close above 150 USD on 2026-12-01?', ['Yes', 'No'], null]);
    expect(fields.questionHash.equals(sha256(question))).toBe(true);
    expect(fields.marketIdHash.equals(Buffer.alloc(32))).toBe(true);
    // The evidence as the document gives it is canonical JSON, and its digest is the last 32 bytes.
    const evidence = JSON.parse(evidenceText) as unknown[][];
    expect(evidence).toHaveLength(4);
    expect(fields.evidenceHash.equals(sha256(evidenceText))).toBe(true);
    expect(fields.evidenceHash.equals(evidenceDigest(evidence.map((items) => ({ evidence: items }))))).toBe(
      true,
    );
  });
});

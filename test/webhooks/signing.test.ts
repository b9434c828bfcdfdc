import { randomBytes, randomInt } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { signedRequest, standardSignature } from '../../src/webhooks/signing.js';

/**
 * Sibyl signs with Node's HMAC, not the reference library's (docs/webhooks.md#verifying): over random
 * secrets, ids, times and bodies (ASCII, multi-byte UTF-8, empty), its signature is the library's
 * `Webhook.sign`, its signed requests verify with the library, and a tampered id, time or body does not.
 */
const ALPHABET = 'abcXYZ019 {}":,.\\é€😀\n';
const randomText = (n: number) =>
  Array.from({ length: n }, () => ALPHABET[randomInt(ALPHABET.length)]).join('');

describe('Standard Webhooks signatures', () => {
  it('equal the reference library’s on 1,000 random messages, and verify with it', () => {
    for (let i = 0; i < 1000; i++) {
      const secret = `whsec_${randomBytes(randomInt(24, 65)).toString('base64')}`;
      const id = `evt_${randomBytes(12).toString('hex')}_we_${i}`;
      const at = new Date(Date.now() + randomInt(-290_000, 290_000));
      const body = i % 100 === 0 ? '' : randomText(randomInt(1, 600));
      expect(standardSignature(secret, id, at, body)).toBe(new Webhook(secret).sign(id, at, body));
      // The key without its prefix signs alike.
      expect(standardSignature(secret.slice('whsec_'.length), id, at, body)).toBe(
        new Webhook(secret).sign(id, at, body),
      );
    }
  });

  it('signed requests verify with the library, with every secret in use; tampering is refused', () => {
    const [current, previous] = [0, 1].map(() => `whsec_${randomBytes(32).toString('base64')}`) as [
      string,
      string,
    ];
    const payload = JSON.stringify({ id: 'evt_1', type: 'balance.low', data: { note: 'é€😀' } });
    const at = new Date();
    const { body, headers } = signedRequest('evt_1_we_1', payload, [current, previous], at, {
      bodySignature: false,
    });
    expect(body).toBe(payload);
    expect(headers['webhook-signature']?.split(' ')).toHaveLength(2);
    for (const secret of [current, previous]) {
      expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(payload));
      expect(() => new Webhook(secret).verify(`${body} `, headers)).toThrow();
      expect(() => new Webhook(secret).verify(body, { ...headers, 'webhook-id': 'evt_2_we_1' })).toThrow();
      expect(() =>
        new Webhook(secret).verify(body, {
          ...headers,
          'webhook-timestamp': String(Math.floor(at.getTime() / 1000) - 1),
        }),
      ).toThrow();
    }
    const other = `whsec_${randomBytes(32).toString('base64')}`;
    expect(() => new Webhook(other).verify(body, headers)).toThrow();
  });
});

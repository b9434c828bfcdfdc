import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { ConfigError } from '../lib/settings.js';

/**
 * How webhook secrets are kept at rest. With SECRET_ENCRYPTION_KEY set they are sealed with
 * AES-256-GCM (`enc1:` + base64 of IV, tag and ciphertext); without it they are stored as issued.
 * Opening accepts both forms, and a secret sealed with SECRET_ENCRYPTION_KEY_PREVIOUS, so the key can
 * be rotated without a migration (docs/webhooks.md#secrets-at-rest).
 */
export interface SecretBox {
  /** True when secrets are encrypted at rest. */
  readonly encrypts: boolean;
  /** Seals `secret` for `accountId`: the account id is authenticated data, so a sealed value copied onto another account does not open. */
  seal(secret: string, accountId: string): string;
  open(stored: string, accountId: string): string;
}

const PREFIX = 'enc1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export function createSecretBox(settings: {
  encryptionKey?: string;
  previousEncryptionKey?: string;
}): SecretBox {
  const key = settings.encryptionKey ? parseKey(settings.encryptionKey, 'SECRET_ENCRYPTION_KEY') : null;
  const previous = settings.previousEncryptionKey
    ? parseKey(settings.previousEncryptionKey, 'SECRET_ENCRYPTION_KEY_PREVIOUS')
    : null;
  const readable = [key, previous].filter((k): k is Buffer => k !== null);
  return {
    encrypts: key !== null,
    seal(secret, accountId) {
      if (!key) return secret;
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(accountId, 'utf8'));
      const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
      return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64');
    },
    open(stored, accountId) {
      if (!stored.startsWith(PREFIX)) return stored;
      const raw = Buffer.from(stored.slice(PREFIX.length), 'base64');
      for (const candidate of readable) {
        try {
          const decipher = createDecipheriv('aes-256-gcm', candidate, raw.subarray(0, IV_BYTES));
          decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
          decipher.setAAD(Buffer.from(accountId, 'utf8'));
          return Buffer.concat([
            decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)),
            decipher.final(),
          ]).toString('utf8');
        } catch {
          // not this key: try the next
        }
      }
      throw new Error('a webhook secret does not open: sealed with another key, or for another account');
    },
  };
}

/** Secrets stored as issued: the default without SECRET_ENCRYPTION_KEY. */
export const clearSecretBox: SecretBox = createSecretBox({});

function parseKey(value: string, name: string): Buffer {
  const key = Buffer.from(value, 'base64');
  if (key.length !== 32)
    throw new ConfigError(`${name} must be 32 bytes, base64-encoded (openssl rand -base64 32)`);
  return key;
}

import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('integer settings', () => {
  it('refuse a fraction with the configuration error rather than truncating it', () => {
    // TypeBox's conversion alone turned "1.5" into 1 and "150.7" into 150.
    for (const [name, text] of [
      ['DB_POOL_SIZE', '1.5'],
      ['DB_POOL_SIZE', '150.7'],
      ['PORT', '8080.5'],
      ['AI_TIMEOUT_MS', '150.5'],
      ['AI_MODEL_1_TIMEOUT_MS', '200.5'], // an optional one
    ] as const) {
      expect(() => loadConfig({ [name]: text }), `${name}=${text}`).toThrow(
        new ConfigError(`Invalid configuration: ${name} must be integer`),
      );
    }
  });

  it('name a fraction first, beside the schema’s own problems', () => {
    expect(() => loadConfig({ DB_POOL_SIZE: '-0.5', PORT: 'x' })).toThrow(
      new ConfigError(
        'Invalid configuration: DB_POOL_SIZE must be integer; PORT must be integer; DB_POOL_SIZE must be >= 1',
      ),
    );
  });

  it('still take whole numbers however they are written', () => {
    expect(loadConfig({ DB_POOL_SIZE: '12' }).dbPoolSize).toBe(12);
    expect(loadConfig({ DB_POOL_SIZE: '12.0' }).dbPoolSize).toBe(12);
    expect(loadConfig({ DB_POOL_SIZE: ' 12' }).dbPoolSize).toBe(12);
    expect(loadConfig({ PORT: '1e3' }).port).toBe(1000);
  });
});

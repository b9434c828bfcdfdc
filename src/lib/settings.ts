import type { Static, TObject, TProperties, TSchema } from 'typebox';

/**
 * A feature's share of the configuration: the environment variables it reads (TypeBox schemas with
 * their defaults, which also give their types) and how it turns their checked values into the
 * settings it uses. `src/config.ts` composes every feature's into the one schema the process
 * parses at start-up.
 */
export interface Settings<E extends TProperties, R> {
  env: E;
  parse(values: Static<TObject<E>>): R;
}

export function defineSettings<E extends TProperties, R>(
  env: E,
  parse: (values: Static<TObject<E>>) => R,
): Settings<E, R> {
  return { env, parse };
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * The problems of integer settings given a fraction (`DB_POOL_SIZE=1.5`), in the configuration
 * error's words (`DB_POOL_SIZE must be integer`). TypeBox's conversion would truncate the text to 1;
 * a fraction is a mistake to report, not a value to round. Text that is not a number at all is left to
 * the schema's own check, which reports it the same way.
 */
export function fractionalIntegers(env: TProperties, values: Record<string, string>): string[] {
  return Object.entries(values)
    .filter(([name, text]) => {
      const schema: TSchema | undefined = env[name];
      const number = Number(text);
      const integer = schema !== undefined && 'type' in schema && schema.type === 'integer';
      return integer && Number.isFinite(number) && !Number.isInteger(number);
    })
    .map(([name]) => `${name} must be integer`);
}

/** Splits a comma-separated list, trimming entries and dropping empty ones. */
export function listSetting(value: string): string[] {
  return value
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
}

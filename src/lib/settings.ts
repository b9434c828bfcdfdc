import type { Static, TObject, TProperties } from 'typebox';

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

/** Splits a comma-separated list, trimming entries and dropping empty ones. */
export function listSetting(value: string): string[] {
  return value
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
}

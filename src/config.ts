import Type, { type Static, type TObject, type TProperties } from 'typebox';
import Value from 'typebox/value';
import { coreSettings } from './core-settings.js';
import type { SettingsFragments } from './feature.js';
import { FEATURES } from './features.js';
import { streamSettings } from './http/event-stream/config.js';
import { ConfigError, fractionalIntegers } from './lib/settings.js';
import { metricsSettings } from './metrics/config.js';

export { ConfigError } from './lib/settings.js';

type SettingsOf<F> = F extends { settings?: infer S } ? S : never;
type Intersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;
type Parsed<S extends SettingsFragments> = { [K in keyof S]: ReturnType<S[K]['parse']> };

/** The fragments besides the core's: the mechanisms' (metrics listener, event streams) and every feature's. */
type Fragments = { metrics: typeof metricsSettings; streams: typeof streamSettings } & Intersection<
  SettingsOf<(typeof FEATURES)[number]>
>;

function fragments(): Fragments {
  const all: SettingsFragments = { metrics: metricsSettings, streams: streamSettings };
  for (const feature of FEATURES) Object.assign(all, feature.settings);
  // The list's own types, which the loop cannot follow: each key is one feature's `settings` entry.
  return all as Fragments;
}

const FRAGMENTS = fragments();

/**
 * Every setting the service reads: the core's and each feature's (src/features.ts), composed into
 * one schema that is parsed once from the environment; the type follows from the fragments. Each
 * has a safe default; docs/operations.md lists them all.
 */
const Env = Type.Object(envOf({ core: coreSettings, ...FRAGMENTS }));

/** The name of every setting (environment variable) the service reads. */
export const SETTING_NAMES: readonly string[] = Object.keys(Env.properties);

function envOf(all: SettingsFragments): TProperties {
  const env: TProperties = {};
  for (const fragment of Object.values(all)) Object.assign(env, fragment.env);
  return env;
}

function parseFragments<S extends SettingsFragments>(
  all: S,
  values: Static<TObject<TProperties>>,
): Parsed<S> {
  return Object.fromEntries(
    Object.entries(all).map(([key, fragment]) => [key, fragment.parse(values)]),
  ) as Parsed<S>;
}

export function loadConfig(env: Record<string, string | undefined> = process.env) {
  const known: Record<string, string> = {};
  for (const name of Object.keys(Env.properties)) {
    const value = env[name];
    // An empty variable means "not set", as in most shells' `FOO= cmd`.
    if (value !== undefined && value !== '') known[name] = value;
  }
  const fractions = fractionalIntegers(Env.properties, known);
  const converted = Value.Convert(Env, Value.Default(Env, known));
  if (fractions.length > 0 || !Value.Check(Env, converted)) {
    const problems = [
      ...fractions,
      ...[...Value.Errors(Env, converted)]
        .filter((e) => e.keyword !== 'anyOf')
        .map((e) => `${e.instancePath.slice(1) || 'environment'} ${e.message}`),
    ];
    throw new ConfigError(`Invalid configuration: ${[...new Set(problems)].join('; ')}`);
  }
  const { core, ...features } = parseFragments({ core: coreSettings, ...FRAGMENTS }, converted);
  return { ...core, ...features };
}

export type Config = ReturnType<typeof loadConfig>;

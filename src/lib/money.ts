/**
 * Money is integer micro-USD (`bigint`) everywhere in code and storage. On the wire it is a decimal
 * string with 2 to 6 fraction digits (docs/api.md#money): "0.01", "0.25", "12.345678".
 */
export const MICROS_PER_USD = 1_000_000n;

export function formatUsd(micros: bigint): string {
  const negative = micros < 0n;
  const abs = negative ? -micros : micros;
  const whole = abs / MICROS_PER_USD;
  let fraction = (abs % MICROS_PER_USD).toString().padStart(6, '0');
  while (fraction.length > 2 && fraction.endsWith('0')) fraction = fraction.slice(0, -1);
  return `${negative ? '-' : ''}${whole}.${fraction}`;
}

const USD_PATTERN = /^(\d{1,12})(?:\.(\d{1,6}))?$/;

/** Parses a non-negative USD decimal string ("100", "0.01", "12.345678"); null when malformed. */
export function parseUsd(text: string): bigint | null {
  const match = USD_PATTERN.exec(text.trim());
  if (!match) return null;
  const whole = BigInt(match[1] as string);
  const fraction = BigInt((match[2] ?? '').padEnd(6, '0'));
  return whole * MICROS_PER_USD + fraction;
}

/** Whole cents to micro-USD, for readable price tables. */
export function cents(n: number): bigint {
  return BigInt(n) * 10_000n;
}

import { MICROS_PER_USD } from '../lib/money.js';
import type { DepositAsset } from './deposits.js';

/** USDC counts 1:1 while its price (our VWAP) is inside this band, inclusive (docs/deposits.md#value). */
export const USDC_PEG_LOW = 0.98;
export const USDC_PEG_HIGH = 1.02;

/** How a deposit is booked. */
export interface Valuation {
  /** `credit`: credit `usdMicros`; `held`: for the operator to decide; `ignored`: recorded, never credited. */
  status: 'credit' | 'held' | 'ignored';
  reason: 'below_minimum' | 'usdc_off_peg' | 'no_price' | null;
  /** The value in micro-USD, rounded down; null when there is no rate to value it at. */
  usdMicros: bigint | null;
  /** The rate applied, USD per whole token as a decimal string ("1" for USDC); null without one. */
  rate: string | null;
}

const RATE = /^(\d{1,12})(?:\.(\d{1,12}))?$/;

/**
 * A price (a float, as the VWAP gives it) as the exact decimal rate a deposit is valued and stored
 * at: at most 9 fraction digits, trailing zeros trimmed ("142.12", "0.000012345").
 */
export function rateFromPrice(price: number): string {
  if (!Number.isFinite(price) || price < 0 || price >= 1e12) throw new RangeError(`not a price: ${price}`);
  const fixed = price.toFixed(9);
  return fixed.includes('.') ? fixed.replace(/0+$/, '').replace(/\.$/, '') : fixed;
}

/** `amount` base units (`decimals`) at `rate` USD per whole unit, in micro-USD rounded down; bigint only. */
export function usdMicrosAt(amount: bigint, decimals: number, rate: string): bigint {
  const match = RATE.exec(rate);
  if (!match) throw new RangeError(`not a decimal rate: ${rate}`);
  const fraction = match[2] ?? '';
  const rateUnits = BigInt((match[1] as string) + fraction);
  const scale = 10n ** BigInt(decimals + fraction.length);
  return (amount * rateUnits * MICROS_PER_USD) / scale;
}

/**
 * The value rule (docs/deposits.md#value): USDC at 1.00 while the USDC price is within 0.98–1.02, else held for
 * the operator (held too when there is no USDC price); SOL at `solRate`, held when there is none.
 * Anything worth less than `minUsdMicros` (USDC at face value) is ignored, whatever the prices.
 */
export function valueDeposit(
  deposit: { asset: DepositAsset; amount: bigint; decimals: number },
  prices: { usdcPrice: number | null; solRate: string | null },
  minUsdMicros: bigint,
): Valuation {
  const rate = deposit.asset === 'USDC' ? '1' : prices.solRate;
  if (rate === null) return { status: 'held', reason: 'no_price', usdMicros: null, rate: null };
  const usdMicros = usdMicrosAt(deposit.amount, deposit.decimals, rate);
  if (usdMicros < minUsdMicros) return { status: 'ignored', reason: 'below_minimum', usdMicros, rate };
  if (deposit.asset === 'USDC') {
    const price = prices.usdcPrice;
    if (price === null) return { status: 'held', reason: 'no_price', usdMicros, rate };
    if (price < USDC_PEG_LOW || price > USDC_PEG_HIGH)
      return { status: 'held', reason: 'usdc_off_peg', usdMicros, rate };
  }
  return { status: 'credit', reason: null, usdMicros, rate };
}

import { isSolanaAddress } from '../lib/base58.js';

/** Where each venue lists a token; a venue without an entry is not asked about it. */
export interface TokenMarkets {
  /** Binance spot pair against USDT (USDT is taken as 1 USD). */
  binance?: string;
  /** Coinbase Exchange product against USD. */
  coinbase?: string;
  /** Kraken pair against USD (the request name; Kraken answers under its own key). */
  kraken?: string;
  /** OKX spot instrument against USDT. */
  okx?: string;
  /** CoinGecko coin id. */
  coingecko?: string;
  /** Pyth price feed id (hex, no 0x). */
  pyth?: string;
}

export interface TokenInfo {
  symbol: string;
  name: string;
  mint: string;
  decimals: number;
  markets: TokenMarkets;
}

/**
 * The supported tokens (docs/prices.md#symbols-and-mints), their mainnet mints and each venue's market
 * name. Symbols are matched case-insensitively; a mint of a listed token prices as that token.
 */
export const TOKENS: readonly TokenInfo[] = [
  {
    symbol: 'SOL',
    name: 'Solana',
    mint: 'So11111111111111111111111111111111111111112',
    decimals: 9,
    markets: {
      binance: 'SOLUSDT',
      coinbase: 'SOL-USD',
      kraken: 'SOLUSD',
      okx: 'SOL-USDT',
      coingecko: 'solana',
      pyth: 'ef0d8b6fda2ceba41da15d4095d1da392a0d2f8ed0c6c7bc0f4cfac8c280b56d',
    },
  },
  {
    symbol: 'BTC',
    name: 'Bitcoin',
    mint: '3NZ9JMVBmGAqocybic2c7LQCJScmgsAZ6vQqTDzcqmJh',
    decimals: 8,
    markets: {
      binance: 'BTCUSDT',
      coinbase: 'BTC-USD',
      kraken: 'XBTUSD',
      okx: 'BTC-USDT',
      coingecko: 'bitcoin',
      pyth: 'e62df6c8b4a85fe1a67db44dc12de5db330f7ac66b72dc658afedf0f4a415b43',
    },
  },
  {
    symbol: 'ETH',
    name: 'Ethereum',
    mint: '7vfCXTUXx5WJV5JADk17DUJ4ksgau7utNKj4b963voxs',
    decimals: 8,
    markets: {
      binance: 'ETHUSDT',
      coinbase: 'ETH-USD',
      kraken: 'ETHUSD',
      okx: 'ETH-USDT',
      coingecko: 'ethereum',
      pyth: 'ff61491a931112ddf1bd8147cd1b641375f79f5825126d665480874634fd0ace',
    },
  },
  {
    symbol: 'USDC',
    name: 'USD Coin',
    mint: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
    decimals: 6,
    markets: {
      binance: 'USDCUSDT',
      kraken: 'USDCUSD',
      okx: 'USDC-USDT',
      coingecko: 'usd-coin',
      pyth: 'eaa020c61cc479712813461ce153894a96a6c00b21ed0cfc2798d1f9a9e9c94a',
    },
  },
  {
    symbol: 'USDT',
    name: 'Tether',
    mint: 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB',
    decimals: 6,
    markets: {
      coinbase: 'USDT-USD',
      kraken: 'USDTUSD',
      coingecko: 'tether',
      pyth: '2b89b9dc8fdf9f34709a5b106b472f0f39bb6ca9ce04b0fd7f2e971688e2e53b',
    },
  },
  {
    symbol: 'BONK',
    name: 'Bonk',
    mint: 'DezXAZ8z7PnrnRJjz3wXBoRgixCa6xjnB7YaB1pPB263',
    decimals: 5,
    markets: {
      binance: 'BONKUSDT',
      coinbase: 'BONK-USD',
      kraken: 'BONKUSD',
      okx: 'BONK-USDT',
      coingecko: 'bonk',
      pyth: '72b021217ca3fe68922a19aaf990109cb9d84e9ad004b4d2025ad6f529314419',
    },
  },
  {
    symbol: 'JUP',
    name: 'Jupiter',
    mint: 'JUPyiwrYJFskUPiHa7hkeR8VUtAeFoSYbKedZNsDvCN',
    decimals: 6,
    markets: {
      binance: 'JUPUSDT',
      coinbase: 'JUP-USD',
      kraken: 'JUPUSD',
      okx: 'JUP-USDT',
      coingecko: 'jupiter-exchange-solana',
      pyth: '0a0408d619e9380abad35060f9192039ed5042fa6f82301d0e48bb52be830996',
    },
  },
  {
    symbol: 'RAY',
    name: 'Raydium',
    mint: '4k3Dyjzvzp8eMZWUXbBCjEvwSkkk59S5iCNLY3QrkX6R',
    decimals: 6,
    markets: {
      binance: 'RAYUSDT',
      kraken: 'RAYUSD',
      okx: 'RAY-USDT',
      coingecko: 'raydium',
      pyth: '91568baa8beb53db23eb3fb7f22c6e8bd303d103919e19733f2bb642d3e7987a',
    },
  },
  {
    symbol: 'ORCA',
    name: 'Orca',
    mint: 'orcaEKTdK7LKz57vaAYr9QeNsVEPfiu6QeMU1kektZE',
    decimals: 6,
    markets: {
      binance: 'ORCAUSDT',
      coinbase: 'ORCA-USD',
      okx: 'ORCA-USDT',
      coingecko: 'orca',
      pyth: '37505261e557e251290b8c8899453064e8d760ed5c65a779726f2490980da74c',
    },
  },
  {
    symbol: 'PYTH',
    name: 'Pyth Network',
    mint: 'HZ1JovNiVvGrGNiiYvEozEVgZ58xaU3RKwX8eACQBCt3',
    decimals: 6,
    markets: {
      binance: 'PYTHUSDT',
      coinbase: 'PYTH-USD',
      kraken: 'PYTHUSD',
      okx: 'PYTH-USDT',
      coingecko: 'pyth-network',
      pyth: '0bbf28e9a841a1cc788f6a361b17ca072d0ea3098a1e5df1c3922d06719579ff',
    },
  },
];

const BY_SYMBOL = new Map(TOKENS.map((t) => [t.symbol, t]));
const BY_MINT = new Map(TOKENS.map((t) => [t.mint, t]));

/** What a request asks to price, once its text is understood. */
export interface PriceTarget {
  /** Cache and coalescing key: the token's symbol, or the mint for tokens outside the registry. */
  key: string;
  /** The registry entry, when the symbol or mint is a listed token. */
  token: TokenInfo | null;
  /** The Solana mint, when known. */
  mint: string | null;
}

const SYMBOL_PATTERN = /^[A-Za-z0-9]{1,15}$/;

export type ParsedTarget =
  | { kind: 'target'; target: PriceTarget }
  | { kind: 'invalid'; reason: string }
  | { kind: 'unknown-symbol' };

/**
 * Reads a symbol or a mint: a listed symbol (any case) or mint → that token; another well-formed
 * mint → priced by the mint-capable venues; a well-formed symbol not listed → unknown; anything else
 * → invalid.
 */
export function parseTarget(text: string): ParsedTarget {
  const trimmed = text.trim();
  if (trimmed.length >= 32 && trimmed.length <= 44) {
    if (!isSolanaAddress(trimmed)) return { kind: 'invalid', reason: 'not a valid Solana mint address' };
    const token = BY_MINT.get(trimmed) ?? null;
    return { kind: 'target', target: { key: token ? token.symbol : trimmed, token, mint: trimmed } };
  }
  if (!SYMBOL_PATTERN.test(trimmed)) {
    return {
      kind: 'invalid',
      reason: 'a symbol is 1-15 letters or digits; a mint is a base58 Solana address',
    };
  }
  const token = BY_SYMBOL.get(trimmed.toUpperCase());
  if (!token) return { kind: 'unknown-symbol' };
  return { kind: 'target', target: { key: token.symbol, token, mint: token.mint } };
}

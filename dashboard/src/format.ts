/** Display helpers: amounts stay the server's decimal strings; only their look changes here. */

export function usd(amount: string): string {
  const [whole = '0', fraction = '00'] = amount.replace('-', '').split('.');
  return `${amount.startsWith('-') ? '−' : ''}$${grouped(whole)}.${fraction}`;
}

/** An integer's digits in groups of three (`1000000000` → `1,000,000,000`): shares' base units. */
export function grouped(digits: string): string {
  return digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  return new Date(iso)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d{3}Z$/, ' UTC');
}

export function shortAddress(address: string): string {
  return address.length > 12 ? `${address.slice(0, 4)}…${address.slice(-4)}` : address;
}

export function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** A UTC date (YYYY-MM-DD) `days` before today. */
export function daysAgo(days: number): string {
  return new Date(Date.now() - days * 86_400_000).toISOString().slice(0, 10);
}

/** What each paid operation is called on the page: the ledger stores its operationId. */
const OPERATIONS: Record<string, string> = {
  getPrice: 'Price',
  getPriceBatch: 'Batch price',
  getHistoricalPrice: 'Price history',
  resolveWithAi: 'AI resolution',
  schedulePriceCheck: 'Scheduled price check',
  schedulePriceCheckAt: 'Scheduled price check',
  scheduleAiResolution: 'Scheduled AI resolution',
  listMarkets: 'Market list',
  getMarket: 'Market detail',
  getMarketHistory: 'Market history',
  listMarketTrades: 'Market trades',
  streamPrices: 'Price stream minutes',
  streamMarkets: 'Market stream minutes',
};

/** An operation as words: the table's, else its operationId spelled out (`searchMarkets` → "Search markets"). */
export function operationName(operationId: string): string {
  const known = OPERATIONS[operationId];
  if (known) return known;
  const words = operationId
    .replace(/^(get|list)(?=[A-Z])/, '')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

const KINDS: Record<string, string> = {
  charge: 'Charge',
  refund: 'Refund',
  deposit: 'Deposit',
  adjustment: 'Adjustment',
};

export function entryKind(kind: string): string {
  return KINDS[kind] ?? kind;
}

/** What a ledger entry was for, in words. */
export function entryPurpose(entry: {
  kind: string;
  operation: string | null;
  reference: string | null;
  memo: string | null;
}): string {
  if (entry.operation) return operationName(entry.operation);
  if (entry.kind === 'deposit') {
    if (entry.reference?.startsWith('sol:')) return 'Deposit from the chain';
    if (entry.reference?.startsWith('play-money:') || entry.reference?.startsWith('sandbox-welcome:'))
      return 'Play money';
  }
  return entry.memo ?? '—';
}

/** An amount of time ago, for "last used": "just now", "5 min ago", "3 h ago", else the date. */
export function ago(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return 'never';
  const minutes = Math.floor((now - Date.parse(iso)) / 60_000);
  if (minutes < 1) return 'just now';
  if (minutes < 60) return `${minutes} min ago`;
  if (minutes < 24 * 60) return `${Math.floor(minutes / 60)} h ago`;
  return when(iso).slice(0, 10);
}

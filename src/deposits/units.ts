/** `amount` base units of `decimals` as a decimal string without trailing zeros ("1.5", "0.000001"). */
export function formatUnits(amount: bigint, decimals: number): string {
  if (decimals === 0) return amount.toString();
  const text = amount.toString().padStart(decimals + 1, '0');
  const whole = text.slice(0, -decimals);
  const fraction = text.slice(-decimals).replace(/0+$/, '');
  return fraction === '' ? whole : `${whole}.${fraction}`;
}

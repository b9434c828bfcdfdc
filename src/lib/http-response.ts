/** Reading answers of outside HTTP services (price venues, Solana RPC) with undici's fetch. */

/** How long a 429/503 asked us to wait: Retry-After in seconds or as an HTTP date; none if absent or unreadable. */
export function retryAfterMs(headers: Headers, nowMs: number): number | undefined {
  const value = headers.get('retry-after');
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}

/**
 * The body as text, read no further than `maxBytes`: past it the stream is cancelled and
 * `tooLarge()` is thrown, so a peer cannot make the process hold an unbounded answer.
 */
export async function readCapped(
  response: Response,
  maxBytes: number,
  tooLarge: () => Error,
): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

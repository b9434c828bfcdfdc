/**
 * UTF-8 encoding into slices of shared slabs. `Buffer.from` of a string longer than 4 KB allocates
 * a backing store of its own (Node's pool serves only smaller ones): for the keyed batch's 17 KB
 * answer that allocation was the largest single cost a key added to the service, more than the
 * encoding itself (docs/performance.md#what-a-key-costs).
 * Here a slab of SLAB_BYTES serves a few dozen answers. A slice is never handed out twice: the slab is dropped when
 * full and freed by the garbage collector once no slice of it is referenced, as Node's own pool is.
 */
const SLAB_BYTES = 1024 * 1024;
/** Larger strings get a buffer of their own, so that one cannot take most of a slab. */
const MAX_SLICE_CHARS = SLAB_BYTES / 16;

let slab = Buffer.alloc(0);
let used = 0;

/** The UTF-8 bytes of `text`, as `Buffer.from(text)` gives them, in a slice of a shared slab. */
export function encodeUtf8(text: string): Buffer {
  if (text.length > MAX_SLICE_CHARS) return Buffer.from(text);
  // A UTF-16 code unit takes at most 3 bytes (a surrogate pair, two units, takes 4): with that much
  // room left the write cannot stop short.
  if (slab.length - used < text.length * 3) {
    slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
    used = 0;
  }
  const start = used;
  const written = slab.write(text, start, 'utf8');
  // The next slice starts 8-aligned, as Node's pool aligns its slices.
  used = (start + written + 7) & ~7;
  return slab.subarray(start, start + written);
}

import unhomoglyph from 'unhomoglyph';

/** When two outcome labels count as the same (the API's AI questions and the market ingestion). */

/** Default-ignorable code points: invisible (zero-width spaces and joiners, variation selectors, …). */
const IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu;

/**
 * The key under which two labels are the same: invisible (default-ignorable) code points removed,
 * NFKC, surrounding spaces trimmed, then the Unicode confusables skeleton (UTS #39: NFD, each
 * character mapped to its prototype, NFD again) taken before and after lower-casing, so that
 * neither case (`YES`, `yes`) nor a look-alike that only exists in one case (capital `I` for `l`)
 * makes two labels distinct. The mapping is Unicode's confusables data as packaged by
 * `unhomoglyph`. `Yes`, `yes`, `Yes\u200b`, `Y\u0435s` (Cyrillic е) and `ｙｅｓ` share a key.
 */
export function labelKey(label: string): string {
  const visible = label.replace(IGNORABLE, '').normalize('NFKC').trim();
  return skeleton(skeleton(visible).toLowerCase());
}

function skeleton(text: string): string {
  return unhomoglyph(text.normalize('NFD')).normalize('NFD');
}

/** Whether a label has nothing visible: empty once spaces and invisible code points are removed. */
export function isBlankLabel(label: string): boolean {
  return label.replace(IGNORABLE, '').trim() === '';
}

/**
 * Bidirectional formatting controls (ALM, LRM, RLM, the embeddings and overrides LRE…RLO, the
 * isolates LRI…PDI): invisible, they reorder how the text after them is displayed — `prod\u202e`
 * shows whatever follows it reversed, in the dashboard's lists and a terminal alike.
 */
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;

/** The bidirectional controls a name may not carry, as the documents state them. */
export const BIDI_CONTROLS_TEXT = 'U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069';

/** Whether `text` holds a bidirectional formatting control. */
export function hasBidiControl(text: string): boolean {
  return BIDI_CONTROLS.test(text);
}

/**
 * Spaces and invisible (default-ignorable) code points at either end: what a paste brings along (a
 * byte-order mark, a zero-width space). Variation selectors are kept: they belong to the visible
 * character before them (the emoji presentation of `❤️`).
 */
const EDGE_INVISIBLE =
  /^(?:\s|(?!\p{Variation_Selector})\p{Default_Ignorable_Code_Point})+|(?:\s|(?!\p{Variation_Selector})\p{Default_Ignorable_Code_Point})+$/gu;

/** A name as it is kept: `\ufeffprod` and `prod\u200b` are `prod`. Inside a name, nothing changes. */
export function trimInvisible(text: string): string {
  return text.replace(EDGE_INVISIBLE, '');
}

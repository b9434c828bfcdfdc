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

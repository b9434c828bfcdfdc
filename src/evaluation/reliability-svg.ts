import type { ReliabilityBin } from './metrics.js';

const SIZE = 320;
const PAD = 40;
const PLOT = SIZE - 2 * PAD;

function x(v: number): number {
  return Math.round((PAD + v * PLOT) * 10) / 10;
}
function y(v: number): number {
  return Math.round((SIZE - PAD - v * PLOT) * 10) / 10;
}

/**
 * The reliability diagram: for each confidence bin with answers, a bar as high as the share of its
 * winners that were right, drawn against the diagonal of perfect calibration, with its count.
 */
export function reliabilitySvg(bins: readonly ReliabilityBin[], title: string): string {
  const bars = bins
    .filter((b) => b.count > 0 && b.accuracy !== null)
    .map((b) => {
      const acc = b.accuracy ?? 0;
      const left = x(b.from) + 1;
      const width = Math.round((PLOT / bins.length - 2) * 10) / 10;
      return [
        `<rect x="${left}" y="${y(acc)}" width="${width}" height="${Math.round(acc * PLOT * 10) / 10}" fill="#4f6bed" fill-opacity="0.75"><title>${b.from.toFixed(1)}–${b.to.toFixed(1)}: ${b.count} answers, ${(acc * 100).toFixed(1)}% right</title></rect>`,
        `<text x="${Math.round((left + width / 2) * 10) / 10}" y="${y(acc) - 4}" font-size="9" text-anchor="middle">${b.count}</text>`,
      ].join('');
    });
  const ticks = [0, 0.2, 0.4, 0.6, 0.8, 1].map(
    (t) =>
      `<text x="${x(t)}" y="${SIZE - PAD + 14}" font-size="10" text-anchor="middle">${t.toFixed(1)}</text>` +
      `<text x="${PAD - 6}" y="${y(t) + 3}" font-size="10" text-anchor="end">${t.toFixed(1)}</text>`,
  );
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${SIZE}" height="${SIZE}" viewBox="0 0 ${SIZE} ${SIZE}" font-family="sans-serif" role="img" aria-label="${escapeXml(title)}">`,
    `<title>${escapeXml(title)}</title>`,
    `<rect x="${PAD}" y="${PAD}" width="${PLOT}" height="${PLOT}" fill="none" stroke="#888"/>`,
    `<line x1="${x(0)}" y1="${y(0)}" x2="${x(1)}" y2="${y(1)}" stroke="#888" stroke-dasharray="4 3"/>`,
    ...bars,
    ...ticks,
    `<text x="${SIZE / 2}" y="${SIZE - 6}" font-size="11" text-anchor="middle">consensus confidence</text>`,
    `<text x="12" y="${SIZE / 2}" font-size="11" text-anchor="middle" transform="rotate(-90 12 ${SIZE / 2})">share right</text>`,
    `<text x="${SIZE / 2}" y="${PAD - 14}" font-size="12" text-anchor="middle">${escapeXml(title)}</text>`,
    '</svg>',
    '',
  ].join('\n');
}

function escapeXml(text: string): string {
  return text.replace(
    /[<>&"]/g,
    (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[c] as string,
  );
}

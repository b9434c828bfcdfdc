import { useEffect, useState } from 'preact/hooks';
import QRCode from 'qrcode';

/** A QR code of `text` (a Solana Pay link), drawn as SVG by the qrcode library. */
export function Qr({ text, label }: { text: string; label: string }) {
  const [svg, setSvg] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    QRCode.toString(text, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' }).then((out) => {
      if (live) setSvg(out);
    });
    return () => {
      live = false;
    };
  }, [text]);
  if (!svg) return null;
  return <img class="qr" alt={label} src={`data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`} />;
}

/** Where progress goes: a terminal (one line redrawn in place) or a log (a line every tenth). */
export interface ProgressSink {
  tty: boolean;
  write(text: string): void;
}

function duration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '--';
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const pad = (n: number) => String(n).padStart(2, '0');
  return h > 0 ? `${h}:${pad(m)}:${pad(s % 60)}` : `${m}:${pad(s % 60)}`;
}

/** One progress line: done of total, the share, the rate and the time left at that rate. */
export function progressLine(done: number, total: number, elapsedMs: number, bar: boolean): string {
  const rate = elapsedMs > 0 ? done / (elapsedMs / 1000) : 0;
  const eta = rate > 0 ? (total - done) / rate : Number.POSITIVE_INFINITY;
  const pct = total ? Math.floor((done / total) * 100) : 100;
  const width = 24;
  const filled = total ? Math.round((done / total) * width) : width;
  const graph = bar ? `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ` : '';
  return `${graph}${done}/${total} questions ${pct}%  ${rate.toFixed(1)}/s  ETA ${duration(eta)}`;
}

/**
 * Progress of an evaluation: on a terminal a bar redrawn at most every 100 ms; otherwise a plain
 * line at each tenth of the set and at the end, so a log stays short.
 */
export function createProgress(
  total: number,
  sink: ProgressSink,
  now: () => number = performance.now.bind(performance),
) {
  const started = now();
  let drawn = 0;
  let lastTenth = 0;
  return {
    tick(done: number) {
      const t = now();
      if (sink.tty) {
        if (done < total && t - drawn < 100) return;
        drawn = t;
        sink.write(`\r${progressLine(done, total, t - started, true)}\u001b[K`);
        return;
      }
      const tenth = total ? Math.floor((done / total) * 10) : 10;
      if (tenth > lastTenth || done === total) {
        lastTenth = tenth;
        sink.write(`${progressLine(done, total, t - started, false)}\n`);
      }
    },
    end() {
      if (sink.tty) sink.write('\n');
    },
  };
}

// Progress for long commands: a bar redrawn in place on a terminal; on anything else (a log file, CI),
// a plain line at most every few seconds, so the log stays readable.
export interface ProgressPrinter {
  update(done: number, total: number, suffix: string): void;
  note(line: string): void;
  end(): void;
}

export function progressPrinter(stream: NodeJS.WriteStream = process.stderr, everyMs = 5000): ProgressPrinter {
  const tty = Boolean(stream.isTTY);
  let last = 0;
  let drawn = false;
  return {
    update(done, total, suffix) {
      const frac = total > 0 ? Math.min(1, done / total) : 0;
      if (tty) {
        const width = 30;
        const fill = Math.round(frac * width);
        stream.write(`\r[${'#'.repeat(fill)}${'.'.repeat(width - fill)}] ${(frac * 100).toFixed(0).padStart(3)}% ${suffix}\x1b[K`);
        drawn = true;
        return;
      }
      const now = Date.now();
      if (now - last < everyMs && done < total) return;
      last = now;
      stream.write(`${(frac * 100).toFixed(0)}% ${suffix}\n`);
    },
    note(line) {
      if (tty && drawn) stream.write('\n');
      drawn = false;
      stream.write(line + '\n');
    },
    end() {
      if (tty && drawn) stream.write('\n');
      drawn = false;
    },
  };
}

/** The progress line on stderr while the bench runs: rewritten in place on a terminal, one line per step elsewhere. */

export interface Progress {
  /** Shows `text`; off a terminal, only when `key` differs from the last one shown. */
  show(text: string, key: string): void;
  /** Clears the line (on a terminal). */
  done(): void;
}

export function stderrProgress(): Progress {
  const tty = process.stderr.isTTY === true;
  let last = '';
  return {
    show(text: string, key: string): void {
      if (tty) process.stderr.write(`\r\x1b[K${text}`);
      else if (key !== last) process.stderr.write(`${text}\n`);
      last = key;
    },
    done(): void {
      if (tty) process.stderr.write('\r\x1b[K');
    },
  };
}

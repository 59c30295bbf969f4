// The cells every table of the page is made of: a row, a table, and the number formats, written out
// rather than left to toLocaleString so the page is the same bytes on every machine, whatever its
// locale or ICU build. A leaf: the section builders and tables.ts all format through it. Pure.

export interface Row {
  cells: string[];
  /** A CSS class for the HTML (passed, failed, not-published, interrupted, not-run). */
  cls?: string;
}
export interface Table {
  header: string[];
  rows: Row[];
}

/** What a cell holds when there is no figure. */
export const DASH = '—';

/** 12345.6 -> "12,346"; 99.87 -> "99.9"; 0.123 -> "0.123". */
export function num(x: number | null | undefined, digits?: number): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return DASH;
  const d = digits ?? (Math.abs(x) >= 100 ? 0 : Math.abs(x) >= 10 ? 1 : Math.abs(x) >= 1 ? 2 : 3);
  const s = x.toFixed(d);
  const [int, frac] = s.split('.');
  const neg = int.startsWith('-');
  const body = (neg ? int.slice(1) : int).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${neg ? '-' : ''}${body}${frac ? `.${frac}` : ''}`;
}

export function ms(x: number | null | undefined): string {
  return x === null || x === undefined ? DASH : `${num(x, 1)} ms`;
}


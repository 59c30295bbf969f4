// Reading pgbench's summary (PostgreSQL 15's wording; older releases lack the failed line).
export interface PgbenchSummary {
  transactions: number;
  failed: number;
  latencyAvgMs: number;
  tps: number;
  clients: number;
  durationSeconds: number;
}

function num(text: string, re: RegExp, what: string, required = true): number {
  const m = re.exec(text);
  if (!m) {
    if (!required) return 0;
    throw new Error(`pgbench output has no ${what}:\n${text.slice(-2000)}`);
  }
  return Number(m[1]);
}

export function parsePgbench(stdout: string): PgbenchSummary {
  return {
    transactions: num(stdout, /number of transactions actually processed: (\d+)/, "'number of transactions actually processed'"),
    failed: num(stdout, /number of failed transactions: (\d+)/, "'number of failed transactions'", false),
    latencyAvgMs: num(stdout, /latency average = ([\d.]+) ms/, "'latency average'"),
    tps: num(stdout, /tps = ([\d.]+) \(without initial connection time\)/, "'tps = ... (without initial connection time)'"),
    clients: num(stdout, /number of clients: (\d+)/, "'number of clients'"),
    durationSeconds: num(stdout, /duration: (\d+) s/, "'duration'", false),
  };
}

// Runs autocannon (its programmatic API) in a process of its own, so its CPU can be measured apart:
// the CPU counted is process.cpuUsage() from just before the run to its end (module loading
// excluded), the same window the rig's generator reports. Prints one JSON line with the result.
// Usage: tsx bench/autocannon-runner.ts URL RATE SECONDS CONNECTIONS BODY_BYTES
import autocannon from 'autocannon';

async function main(): Promise<void> {
  const [url, rate, seconds, connections, bodyBytes] = process.argv.slice(2);
  const body = JSON.stringify({ events: [{ customer_id: 'cus_0001', meter: 'api_calls', quantity: 1, idempotency_key: 'x'.repeat(Math.max(1, Number(bodyBytes) - 90)) }] });
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const result = await autocannon({
    url,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer bench' },
    body,
    connections: Number(connections),
    overallRate: Number(rate) > 0 ? Number(rate) : undefined,
    duration: Number(seconds),
    pipelining: 1,
  });
  const cpu = process.cpuUsage(cpu0);
  const elapsed = (performance.now() - t0) / 1000;
  process.stdout.write(
    `${JSON.stringify({
      requests: result.requests.total,
      elapsed_s: elapsed,
      rps: result.requests.total / elapsed,
      non2xx: result.non2xx,
      errors: result.errors,
      timeouts: result.timeouts,
      p50_ms: result.latency.p50,
      p99_ms: result.latency.p99,
      cpu_us: cpu.user + cpu.system,
      cpu_us_per_request: result.requests.total ? (cpu.user + cpu.system) / result.requests.total : null,
    })}\n`,
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`autocannon-runner: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});

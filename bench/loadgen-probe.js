// What the load generator itself costs per answer (docs/performance.md#load-generator-cpu): a plain
// Node.js server answers a fixed body after a fixed delay (which sets the rate), and autocannon, with
// bench/run.js's options, counts this process's CPU per answer. No service, no database.
//   node bench/loadgen-probe.js '[{"bytes":1100,"delayMs":25},{"bytes":24500,"delayMs":25}]'
// Each case: `bytes` of body, `delayMs` before each answer (0: as fast as it goes), `amount` of
// requests (default 8000).
import { spawn } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const PORT = Number(process.env.BENCH_PORT_BASE ?? 5790);

if (process.argv[2] === 'serve') {
  const body = Buffer.alloc(Number(process.env.PROBE_BYTES), 'a');
  const delay = Number(process.env.PROBE_DELAY_MS);
  http
    .createServer((_request, response) => {
      const send = () => {
        response.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
        response.end(body);
      };
      if (delay > 0) setTimeout(send, delay);
      else send();
    })
    .listen(PORT, '127.0.0.1');
} else {
  /** @type {{ bytes: number, delayMs: number, amount?: number }[]} */
  const cases = JSON.parse(process.argv[2] ?? '[{"bytes":1100,"delayMs":25},{"bytes":12500,"delayMs":25}]');
  for (const probe of cases) {
    const server = spawn(process.execPath, [fileURLToPath(import.meta.url), 'serve'], {
      env: { ...process.env, PROBE_BYTES: String(probe.bytes), PROBE_DELAY_MS: String(probe.delayMs) },
      stdio: 'inherit',
    });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    /** @param {number} amount */
    const run = async (amount) => {
      const cpu = process.cpuUsage();
      const started = performance.now();
      /** @type {{ '2xx': number }} */
      const result = await autocannon({
        url: `http://127.0.0.1:${PORT}`,
        connections: 50,
        amount,
        timeout: 30,
        sampleInt: 20,
        requests: [{ method: 'GET', path: '/' }],
      });
      const used = process.cpuUsage(cpu);
      const answered = result['2xx'];
      return {
        rps: Math.round(answered / ((performance.now() - started) / 1000)),
        loadUsPerAnswer: Math.round((used.user + used.system) / answered),
      };
    };
    await run(2000); // warm-up: JIT and connections
    console.log(JSON.stringify({ ...probe, ...(await run(probe.amount ?? 8000)) }));
    server.kill();
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}

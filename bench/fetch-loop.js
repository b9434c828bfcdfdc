// The baseline of `npm run bench:webhooks`: N bare POSTs of one body to the receiver, `concurrency`
// at a time, with undici's fetch and the same CA — what sending costs with no database, no signing,
// no lease. Prints { seconds, cpuSeconds } as JSON.
import { readFileSync } from 'node:fs';
import { Agent, fetch } from 'undici';

const [url, total, concurrency, caFile] = process.argv.slice(2);
const agent = new Agent({
  connect: { ca: readFileSync(caFile, 'utf8') },
  connections: 16,
  keepAliveTimeout: 4000,
});
const body = JSON.stringify({ requestId: 'req_bench', type: 'price', status: 'completed', data: { i: 0 } });
let next = 0;
const cpu = process.cpuUsage();
const started = performance.now();
await Promise.all(
  Array.from({ length: Number(concurrency) }, async () => {
    while (next < Number(total)) {
      next++;
      const r = await fetch(url, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json' },
        dispatcher: agent,
      });
      await r.arrayBuffer();
    }
  }),
);
const seconds = (performance.now() - started) / 1000;
const used = process.cpuUsage(cpu);
process.stdout.write(`${JSON.stringify({ seconds, cpuSeconds: (used.user + used.system) / 1e6 })}\n`);
await agent.close();

// Checks @sibyl/client as a user gets it: packs client/ (its prepack builds dist/), installs the
// tarball in an empty folder with `npm install` (its dependencies from the registry, nothing from
// this checkout), type-checks a TypeScript program against the installed types, then starts the
// service (`node bin/sibyl.js start` on a throwaway embedded database and a free port) and runs a
// plain-Node ESM program that imports '@sibyl/client', gets a price, verifies and decodes a signed
// price (attest=true) against the published keys and makes its Ed25519 instruction (without
// @solana/kit installed), has the service send it a signed test webhook over HTTPS, and verifies
// that webhook. Stops the service and removes
// everything afterwards. Run by .ci/run; run it alone with `node scripts/check-client-package.js`
// after `npm ci`.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generate } from 'selfsigned';

const root = fileURLToPath(new URL('..', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'sibyl-client-check-'));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const log = (line) => process.stdout.write(`check-client-package: ${line}\n`);

function run(command, args, cwd, env = process.env) {
  return execFileSync(command, args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
}

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Starts `sibyl start` and resolves with the sandbox key its first start prints. */
function startService(env) {
  const child = spawn(process.execPath, [join(root, 'bin/sibyl.js'), 'start'], {
    cwd: work,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const started = new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the service printed no key in 120 s:\n${output}`)),
      120_000,
    );
    const read = (chunk) => {
      output += chunk.toString('utf8');
      const key = /API key\s+(pk_test_\w+)/.exec(output)?.[1];
      if (key) {
        clearTimeout(timer);
        resolve(key);
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the service exited (${code}) before it was ready:\n${output}`));
    });
  });
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null) return resolve(child.exitCode);
      child.once('exit', (code) => resolve(code));
      child.kill('SIGTERM');
    });
  return { started, stop };
}

const PROGRAM = `// A user's program: plain Node, ESM, nothing but the installed package.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { createSibylClient, decodeAttestation, ed25519Instruction, SibylApiError, unwrap, verifyAttestation, verifyWebhook } from '@sibyl/client';

const { SIBYL_URL, SIBYL_KEY, TLS_CERT, TLS_KEY } = process.env;
const sibyl = createSibylClient({ baseUrl: SIBYL_URL, apiKey: SIBYL_KEY });

const price = await unwrap(sibyl.GET('/api/v1/price/{symbolOrMint}', { params: { path: { symbolOrMint: 'SOL' } } }));
if (price.symbol !== 'SOL' || !(price.vwapPrice > 0)) throw new Error('no SOL price: ' + JSON.stringify(price));

// A signed price, verified against the published keys, decoded, and made an Ed25519 instruction
// (without @solana/kit installed).
const keys = await unwrap(sibyl.GET('/api/v1/attestation/keys'));
const attested = await unwrap(sibyl.GET('/api/v1/price/{symbolOrMint}', { params: { path: { symbolOrMint: 'SOL' }, query: { attest: 'true' } } }));
const attestation = attested.attestation;
if (!attestation || !(await verifyAttestation(attestation, keys))) throw new Error('the attestation does not verify: ' + JSON.stringify(attested));
if (await verifyAttestation(attestation, keys, { mode: 'live' })) throw new Error('a sandbox attestation verified as live');
const fields = decodeAttestation(attestation);
if (fields.kind !== 'price' || Number(fields.price + 'e' + fields.exponent) !== attested.vwapPrice) throw new Error('decoded ' + JSON.stringify(fields, (k, v) => typeof v === 'bigint' ? String(v) : v));
const instruction = ed25519Instruction(attestation);
if (instruction.programAddress !== 'Ed25519SigVerify111111111111111111111111111' || instruction.data.length !== 112 + 94) throw new Error('unexpected Ed25519 instruction');

const missing = await unwrap(sibyl.GET('/api/v1/price/{symbolOrMint}', { params: { path: { symbolOrMint: 'NOPE' } } })).catch((e) => e);
if (!(missing instanceof SibylApiError) || missing.code !== 'SYMBOL_NOT_FOUND') throw new Error('expected SYMBOL_NOT_FOUND');

// A receiver on loopback HTTPS; the service sends it a signed test event.
let delivered;
const arrived = new Promise((resolve) => { delivered = resolve; });
const receiver = createServer({ cert: readFileSync(TLS_CERT), key: readFileSync(TLS_KEY) }, (req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => { res.writeHead(200).end('ok'); delivered({ body: Buffer.concat(chunks), headers: req.headers }); });
});
await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const { webhookSecret } = await unwrap(sibyl.GET('/api/v1/account'));
const sent = await unwrap(sibyl.POST('/api/v1/webhooks/test', {
  body: { callbackUrl: 'https://127.0.0.1:' + receiver.address().port + '/sibyl' },
}));
if (!sent.delivered) throw new Error('test webhook not delivered: ' + JSON.stringify(sent));
const { body, headers } = await arrived;
receiver.close();
const payload = verifyWebhook(body, headers, webhookSecret);
if (payload.type !== 'test') throw new Error('unexpected payload ' + JSON.stringify(payload));
let refused = false;
try { verifyWebhook(Buffer.from(body.toString().replace('"test"', '"ai"')), headers, webhookSecret); } catch { refused = true; }
if (!refused) throw new Error('a changed body verified');

console.log(JSON.stringify({ price: price.vwapPrice, costUsd: price.costUsd, attestedCostUsd: attested.costUsd, attestationKey: attestation.publicKey, webhook: payload.type, requestId: payload.requestId }));
`;

// Types as a TypeScript user sees them: no @types/node, the DOM's fetch types.
const TYPED_PROGRAM = `import {
  type Attestation,
  createSibylClient,
  decodeAttestation,
  ed25519Instruction,
  type Schemas,
  unwrap,
  verifyAttestation,
  verifyWebhook,
  WebhookInbox,
} from '@sibyl/client';

const sibyl = createSibylClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: 'pk_test_x' });
export async function main(): Promise<number> {
  const price: Schemas['PriceResult'] = await unwrap(
    sibyl.GET('/api/v1/price/{symbolOrMint}', { params: { path: { symbolOrMint: 'SOL' } } }),
  );
  const inbox = new WebhookInbox();
  inbox.deliver(verifyWebhook('{}', new Headers(), 'whsec_x'));
  const record = await sibyl.waitForResolution('req_x', { webhooks: inbox });
  for await (const job of sibyl.iterateJobs('price')) void job.jobId;
  // @ts-expect-error: an unknown path does not compile
  void sibyl.GET('/api/v1/nope');
  return price.vwapPrice + (record.status === 'COMPLETED' ? 1 : 0);
}
// Attestations type-check without @solana/kit installed (it is an optional peer).
export async function attested(attestation: Attestation): Promise<string> {
  const verified: boolean = await verifyAttestation(attestation, ['key'], { mode: 'live' });
  const fields = decodeAttestation(attestation.message);
  const instruction = ed25519Instruction(attestation);
  const value = fields.kind === 'price' ? fields.price * 10n : fields.outcomeIndex;
  return \`\${verified} \${value} \${instruction.programAddress} \${instruction.data.length}\`;
}
`;

let service;
try {
  log('packing client/');
  const packed = JSON.parse(run(npm, ['pack', '--json', '--pack-destination', work], join(root, 'client')));
  const tarball = join(work, packed[0].filename);
  const files = packed[0].files.map((f) => f.path);
  for (const needed of ['dist/index.js', 'dist/index.d.ts', 'dist/webhooks.js', 'package.json', 'LICENSE']) {
    if (!files.includes(needed)) throw new Error(`the tarball has no ${needed}`);
  }
  // The client and its types, not the document with its recorded examples (3.1 MB unpacked when
  // openapi.json was shipped): the service serves that itself.
  const unpacked = packed[0].unpackedSize;
  log(`tarball ${packed[0].size} bytes, ${unpacked} unpacked, ${files.length} files`);
  if (files.some((f) => f.endsWith('.json') && f !== 'package.json')) {
    throw new Error(`the tarball ships a document: ${files.join(', ')}`);
  }
  // The types of every operation: 1.62 MB once the account events, their dashboard twins and the
  // catalog's event schemas were added (2026-12-07); the bound catches a shipped document, not growth.
  if (unpacked > 2_000_000)
    throw new Error(`the package unpacks to ${unpacked} bytes: more than the types need`);
  const types = readFileSync(join(root, 'client/src/schema.ts'), 'utf8');
  if (/@example/.test(types)) throw new Error('client/src/schema.ts carries recorded examples');

  const app = join(work, 'app');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), '{ "name": "client-check", "private": true, "type": "module" }\n');
  log(`installing ${packed[0].filename} in an empty folder`);
  run(npm, ['install', '--no-audit', '--no-fund', tarball], app);
  const installed = readdirSync(join(app, 'node_modules')).sort();
  if (installed.includes('sibyl')) throw new Error('the client pulled in the server');
  // @solana/kit is an optional peer (ed25519Instruction needs none of it at run time).
  if (installed.includes('@solana')) throw new Error('the client pulled in @solana packages');

  log('type-checking a TypeScript program against the installed types');
  writeFileSync(join(app, 'typed.ts'), TYPED_PROGRAM);
  writeFileSync(
    join(app, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2023',
        lib: ['ES2023', 'DOM', 'DOM.Iterable'],
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        types: [],
      },
      files: ['typed.ts'],
    }),
  );
  run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', app], app);

  const tls = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }],
  });
  writeFileSync(join(work, 'cert.pem'), tls.cert);
  writeFileSync(join(work, 'key.pem'), tls.private);

  const port = await freePort();
  const env = { ...process.env };
  for (const name of Object.keys(env)) if (name === 'DATABASE_URL' || name === 'REDIS_URL') delete env[name];
  Object.assign(env, {
    SIBYL_DATA_DIR: join(work, 'data'),
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    // The receiver is on loopback with its own certificate: development settings.
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    NODE_EXTRA_CA_CERTS: join(work, 'cert.pem'),
  });
  log(`starting the service on port ${port}`);
  service = startService(env);
  const key = await service.started;

  log('running the program');
  writeFileSync(join(app, 'check.mjs'), PROGRAM);
  const printed = run(process.execPath, ['check.mjs'], app, {
    ...process.env,
    SIBYL_URL: `http://127.0.0.1:${port}`,
    SIBYL_KEY: key,
    TLS_CERT: join(work, 'cert.pem'),
    TLS_KEY: join(work, 'key.pem'),
  });
  log(`program printed ${printed.trim()}`);
  const code = await service.stop();
  service = undefined;
  if (code !== 0) throw new Error(`the service exited ${code} on SIGTERM`);
  log('ok');
} finally {
  await service?.stop();
  rmSync(work, { recursive: true, force: true });
}

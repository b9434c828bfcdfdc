// Helpers of the benchmark runner: child processes, HTTP checks, base58, statistics.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';

export function startProcess(name, args, env) {
  const child = spawn(process.execPath, args, {
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c) => {
    output += c;
  });
  child.stderr.on('data', (c) => {
    output += c;
  });
  child.name = name;
  child.output = () => output;
  return child;
}

export async function waitForHttp(url, child, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ok = await fetch(url).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    if (child.exitCode !== null) throw new Error(`${child.name} exited early:\n${child.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${child.name} never answered ${url}:\n${child.output()}`);
}

export function stopProcess(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve(child.exitCode);
    child.once('exit', (code) => resolve(code));
    child.kill('SIGTERM');
  });
}

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** A random, well-formed Solana address (base58 of 32 random bytes). */
export function randomMint() {
  const bytes = randomBytes(32);
  bytes[0] = bytes[0] || 1; // no leading zero byte, so the text is 43-44 characters
  let n = BigInt(`0x${bytes.toString('hex')}`);
  let out = '';
  while (n > 0n) {
    out = ALPHABET[Number(n % 58n)] + out;
    n /= 58n;
  }
  return out;
}

export function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export function usd(micros) {
  const neg = micros < 0n;
  const abs = neg ? -micros : micros;
  let frac = (abs % 1_000_000n).toString().padStart(6, '0');
  while (frac.length > 2 && frac.endsWith('0')) frac = frac.slice(0, -1);
  return `${neg ? '-' : ''}${abs / 1_000_000n}.${frac}`;
}

// The port a server listens on, for the benchmark's fake providers and receivers (no project
// imports: the fakes run as processes of their own, and their CPU is measured).

/**
 * The TCP port of a listening server (`server.address()` is a string only for a pipe or a socket
 * file, and null before `listening`).
 * @param {import('node:net').Server} server
 */
export function listeningPort(server) {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error(`not a TCP listener: ${address}`);
  return address.port;
}

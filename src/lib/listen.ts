/** A listener that could not open its port: said in one line, without a stack trace. */
export class ListenError extends Error {
  override name = 'ListenError';
}

/**
 * Runs `listen`, turning the errors a person fixes by choosing another port or address into a
 * ListenError that names the setting to change (`variable`: PORT, METRICS_PORT).
 */
export async function listenOrExplain<T>(
  listen: () => Promise<T>,
  where: { host: string; port: number; variable: string },
): Promise<T> {
  try {
    return await listen();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const at = `${where.host}:${where.port}`;
    if (code === 'EADDRINUSE') {
      throw new ListenError(
        `${at} is already in use (another Sibyl, or another program): set ${where.variable} to a free port, ` +
          `e.g. ${where.variable}=${where.port === 0 ? 3001 : where.port + 1}`,
      );
    }
    if (code === 'EACCES') {
      throw new ListenError(`not allowed to listen on ${at}: set ${where.variable} to a port above 1023`);
    }
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
      throw new ListenError(`cannot listen on ${at}: HOST is not an address of this machine`);
    }
    throw err;
  }
}

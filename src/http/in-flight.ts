/**
 * The route handlers still running. A client that hangs up does not stop its handler, and Fastify's
 * close does not wait for a request whose connection is gone; closing the database under such a
 * handler failed its charge. The app waits for these before it reports itself closed.
 */
export class InFlight {
  private readonly running = new Set<Promise<unknown>>();

  track<T>(work: Promise<T>): Promise<T> {
    this.running.add(work);
    const done = () => this.running.delete(work);
    work.then(done, done);
    return work;
  }

  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }
}

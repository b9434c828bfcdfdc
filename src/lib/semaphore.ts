/**
 * At most `limit` holders at once; the others wait in arrival order. For bounding how many of a
 * process's database connections one kind of work may hold.
 */
export class Semaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      // The slot passes straight to the next waiter, so `active` never drops below what runs.
      if (next) next();
      else this.active--;
    }
  }
}

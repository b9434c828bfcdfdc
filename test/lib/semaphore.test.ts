import { describe, expect, it } from 'vitest';
import { Semaphore } from '../../src/lib/semaphore.js';

describe('Semaphore', () => {
  it('lets at most `limit` run at once, the others in arrival order, and frees a slot on failure', async () => {
    const semaphore = new Semaphore(2);
    let running = 0;
    let most = 0;
    const order: number[] = [];
    const releases: (() => void)[] = [];
    const tasks = Array.from({ length: 6 }, (_, i) =>
      semaphore
        .run(async () => {
          running++;
          most = Math.max(most, running);
          order.push(i);
          await new Promise<void>((resolve) => releases.push(resolve));
          running--;
          if (i === 1) throw new Error('task 1 fails');
          return i;
        })
        .catch((err: Error) => err.message),
    );
    while (order.length < 6) {
      await new Promise((resolve) => setTimeout(resolve, 1));
      releases.shift()?.();
    }
    for (const release of releases) release();
    expect(await Promise.all(tasks)).toEqual([0, 'task 1 fails', 2, 3, 4, 5]);
    expect(most).toBe(2);
    expect(order).toEqual([0, 1, 2, 3, 4, 5]);
  });
});

/**
 * A wait with a bound, for tests that must fail rather than hang: `work`'s value, or `late` once `ms` milliseconds
 * pass first. The timer is cleared either way and never keeps the process alive; `work` itself is left to settle.
 * @returns `work`'s value, or `late`. @throws what `work` throws, when it throws in time.
 */
export async function within<T, L>(work: PromiseLike<T>, ms: number, late: L): Promise<T | L> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<L>((resolve) => {
    timer = setTimeout(() => resolve(late), ms);
    timer.unref();
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Marks a wait that ran out (see {@link within}). */
export const LATE: unique symbol = Symbol("late");

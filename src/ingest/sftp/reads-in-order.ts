/**
 * Reads `pieces` pieces of a file, `window` of them under way at a time, and hands each result to `use`
 * in piece order as it comes: the one windowed read of the download and of the check again
 * (remote-content.ts). `use` returns false to stop at that piece: the reads still under way are waited
 * for (never left answering into a closed handle), and the result it stopped at is returned; undefined
 * once every piece was used. A read that fails fails the whole.
 */
export async function readsInOrder<T>(
  pieces: number,
  window: number,
  read: (piece: number) => Promise<T>,
  use: (result: T) => boolean,
): Promise<{ readonly stoppedAt: T } | undefined> {
  // The reads under way, in piece order.
  const underWay: Promise<T>[] = [];
  let next = 0;
  const fill = () => {
    while (next < pieces && underWay.length < window) {
      const started = read(next++);
      started.catch(() => undefined); // awaited in order below
      underWay.push(started);
    }
  };
  fill();
  for (let head = underWay.shift(); head !== undefined; head = underWay.shift()) {
    const result = await head;
    if (!use(result)) {
      await Promise.allSettled(underWay);
      return { stoppedAt: result };
    }
    fill();
  }
  return undefined;
}

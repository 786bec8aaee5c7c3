/** The promise's value, or undefined when it takes longer than `ms`; a late rejection is ignored. */
export async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  promise.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => {
      resolve(undefined);
    }, ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

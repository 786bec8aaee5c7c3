/**
 * `asked`, or its end by `signal`, whichever is first (`ended` says why it has no answer): a wait whose
 * other side took the request and never answers (PostgreSQL, a file system) does not hold a pass past its
 * deadline. What was asked is left to finish on its own; its failure after the signal is not reported.
 */
export async function withinSignal<T>(
  asked: Promise<T>,
  signal: AbortSignal | undefined,
  ended: (signal: AbortSignal) => Error,
): Promise<T> {
  if (signal === undefined) return asked;
  asked.catch(() => undefined); // when the signal wins, the request's own end comes after
  let onAbort = (): void => undefined;
  const end = new Promise<never>((_, reject) => {
    onAbort = () => {
      reject(ended(signal));
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([asked, end]);
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}

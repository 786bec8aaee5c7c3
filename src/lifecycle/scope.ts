/**
 * One lifecycle for a long-running command: what it opens goes into a scope as it opens it, and the
 * scope closes it all in reverse order, once, in one `finally`. A failure at start (a port in use)
 * closes what was opened before it, so the process ends by itself with no handle left open.
 */
export interface Scope {
  /** Runs `close` when the scope closes: the last deferred is closed first. */
  defer(close: () => unknown): void;
  /** Calls `handler` on each of `signals` until the scope closes, then stops listening. */
  onSignals(signals: readonly NodeJS.Signals[], handler: (signal: NodeJS.Signals) => void): void;
}

/**
 * Runs `body` in a fresh scope and closes the scope after it, whether it returned or threw. A closer
 * that fails is handed to `onCloseError` and the others still run; the body's own error is the one
 * that propagates.
 */
export async function withScope<T>(
  onCloseError: (error: unknown) => void,
  body: (scope: Scope) => Promise<T>,
): Promise<T> {
  const closers: (() => unknown)[] = [];
  const scope: Scope = {
    defer: (close) => {
      closers.push(close);
    },
    onSignals: (signals, handler) => {
      for (const signal of signals) process.on(signal, handler);
      closers.push(() => {
        for (const signal of signals) process.off(signal, handler);
      });
    },
  };
  try {
    return await body(scope);
  } finally {
    for (const close of closers.reverse()) {
      try {
        await close();
      } catch (error) {
        onCloseError(error);
      }
    }
  }
}

/** JSON.parse messages, made short: V8 quotes the whole input in some of them. */
export function describeJsonError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const quoted = message.indexOf(', "');
  return quoted === -1 ? message : message.slice(0, quoted);
}

/** The "at position N" V8 gives in some JSON.parse messages, or undefined. */
export function jsonErrorPosition(error: unknown): number | undefined {
  const match = error instanceof Error ? /at position (\d+)/.exec(error.message) : null;
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

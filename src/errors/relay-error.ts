/**
 * Base of every error this project raises on purpose. `code` is stable and is what callers branch on;
 * the message is for people and names what to do.
 */
export abstract class RelayError extends Error {
  abstract readonly code: string;

  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Turns anything thrown into an Error, so the edges can log and classify it uniformly. */
export function coerceError(thrown: unknown): Error {
  if (thrown instanceof Error) return thrown;
  if (typeof thrown === "string") return new Error(thrown);
  try {
    return new Error(JSON.stringify(thrown));
  } catch {
    return new Error(String(thrown));
  }
}

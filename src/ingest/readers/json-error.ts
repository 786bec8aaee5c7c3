import { truncateValue } from "../../invoice/field-error.js";

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

/** A value shortened for an error message; one nested too deeply to print (stack overflow) is elided. */
export function previewValue(value: unknown): string {
  try {
    return truncateValue(value);
  } catch {
    return Array.isArray(value) ? "[…]" : "{…}";
  }
}

import { FIELD_NAMES, givenTwice, type PickedFields } from "../../invoice/normalise.js";
import type { ReaderProfile } from "./reader-profile.js";

/** A key an object of a JSON text names more than once: one value JSON.parse dropped, and where. */
export interface DroppedValue {
  /** The key's path from the top object, as spelled (`["routing", "archive_policy"]`). */
  readonly path: readonly string[];
  readonly value: unknown;
}

interface ObjectFrame {
  /**
   * The object holding this one and the key it is under (none for the top object), or "array" inside an
   * array, where no field is read. A link rather than a copied path: nesting costs no more than its depth.
   */
  readonly within: { readonly parent: ObjectFrame; readonly key: string } | undefined | "array";
  /** Each key's values so far, as [start, end) of their text. */
  readonly keys: Map<string, [number, number][]>;
  key: string | undefined;
  valueStart: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * The values JSON.parse drops from `text` (a JSON text it parsed), whose objects keep only the last value
 * of a key given twice (ECMA-262, JSON.parse; RFC 8259 leaves it to the parser): every earlier one, with
 * its path. One pass over the text, with an explicit stack, so nesting of any depth costs no call stack.
 */
export function droppedValues(text: string): DroppedValue[] {
  const dropped: DroppedValue[] = [];
  const stack: (ObjectFrame | "array")[] = [];
  const endValue = (frame: ObjectFrame, end: number) => {
    if (frame.key === undefined) return;
    const spans = frame.keys.get(frame.key) ?? [];
    spans.push([frame.valueStart, end]);
    frame.keys.set(frame.key, spans);
    frame.key = undefined;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const top = stack[stack.length - 1];
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      if (top !== undefined && top !== "array" && top.key === undefined && top.valueStart < 0) {
        const raw = text.slice(i + 1, end - 1);
        top.key = raw.includes("\\") ? String(JSON.parse(text.slice(i, end))) : raw;
        top.valueStart = text.indexOf(":", end) + 1;
      }
      i = end - 1;
    } else if (c === 0x7b) {
      const within =
        top === undefined
          ? undefined
          : top === "array" || top.within === "array"
            ? "array"
            : { parent: top, key: top.key ?? "" };
      stack.push({ within, keys: new Map(), key: undefined, valueStart: -1 });
    } else if (c === 0x5b) stack.push("array");
    else if (c === 0x2c && top !== undefined && top !== "array") {
      endValue(top, i);
      top.valueStart = -1;
    } else if (c === 0x7d || c === 0x5d) {
      stack.pop();
      if (top !== undefined && top !== "array") {
        endValue(top, i);
        if (top.within !== "array")
          for (const [key, spans] of top.keys)
            for (const [start, end] of spans.slice(0, -1))
              dropped.push({
                path: [...pathOf(top), key],
                value: JSON.parse(text.slice(start, end)) as unknown,
              });
      }
    }
  }
  return dropped;
}

/** The keys leading from the top object to `frame`. */
function pathOf(frame: ObjectFrame): string[] {
  const path: string[] = [];
  for (let at = frame.within; at !== undefined && at !== "array"; at = at.parent.within) path.unshift(at.key);
  return path;
}

/** Index just past the string starting at `from` (its opening quote): the next quote not escaped. */
function stringEnd(text: string, from: number): number {
  for (let quote = text.indexOf('"', from + 1); quote !== -1; quote = text.indexOf('"', quote + 1)) {
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
  }
  return text.length;
}

/**
 * A JSON object's fields (profile.pick), with what JSON.parse dropped put back as a field given twice: a
 * key given again with another value rejects the record, naming the field, as a key given again in
 * another case does (src/invoice/normalise.ts, fieldSetter); the same value again is harmless.
 */
export function pickJsonObject(
  profile: ReaderProfile,
  record: Readonly<Record<string, unknown>>,
  text: string,
): PickedFields {
  const picked = profile.pick(record);
  const dropped = droppedValues(text);
  if (dropped.length === 0) return picked;
  const errors = [...picked.errors];
  for (const { path, value } of dropped) {
    const again = profile.pick(nested(path, value)).fields;
    for (const [field, earlier] of Object.entries(again) as [keyof typeof FIELD_NAMES, unknown][]) {
      if (sameValue(earlier, picked.fields[field])) continue;
      errors.push({
        field: FIELD_NAMES[field],
        reason: givenTwice(path.join(".")),
      });
    }
  }
  return { ...picked, errors };
}

/** `{a: {b: value}}` for the path `a.b`. */
function nested(path: readonly string[], value: unknown): Record<string, unknown> {
  let out: unknown = value;
  for (let i = path.length - 1; i >= 0; i--) out = { [path[i] ?? ""]: out };
  return out as Record<string, unknown>;
}

function sameValue(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

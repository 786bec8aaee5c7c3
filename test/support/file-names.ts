import { fileName, type FileName } from "../../src/names/file-name.js";

/** A name a test knows to be one path segment, as the checked type the relay's paths are made from. */
export function segment(raw: string): FileName {
  const name = fileName(raw);
  if (name === undefined) throw new Error(`${JSON.stringify(raw)} is not one path segment`);
  return name;
}

/**
 * Where UTF-16 that TextDecoder refused goes wrong. TextDecoder only says that it does; this finds the
 * first bad code unit so the error can name its byte offset and line. Runs only once a file has failed,
 * so a loop over code units is fine here.
 */

/** The first problem in `bytes` (which start on a code unit boundary), or undefined if none is seen. */
export function utf16ErrorIn(
  bytes: Uint8Array,
  bigEndian: boolean,
  atEnd: boolean,
): { readonly index: number; readonly problem: string } | undefined {
  const unitAt = (i: number): number => {
    const first = bytes[i] ?? 0;
    const second = bytes[i + 1] ?? 0;
    return bigEndian ? (first << 8) | second : first | (second << 8);
  };
  let i = 0;
  for (; i + 1 < bytes.length; i += 2) {
    const unit = unitAt(i);
    if (isLowSurrogate(unit)) return { index: i, problem: `an unpaired surrogate ${hex(unit)}` };
    if (!isHighSurrogate(unit)) continue;
    if (i + 3 >= bytes.length) {
      // Its pair would be in bytes not given yet; at the end of the file there are none.
      return atEnd
        ? { index: i, problem: `the file ends after the unpaired surrogate ${hex(unit)}` }
        : undefined;
    }
    const next = unitAt(i + 2);
    if (!isLowSurrogate(next)) return { index: i, problem: `an unpaired surrogate ${hex(unit)}` };
    i += 2;
  }
  if (atEnd && i < bytes.length) {
    return { index: i, problem: "the file ends in an odd byte (UTF-16 has two bytes per code unit)" };
  }
  return undefined;
}

/** The text of whole, valid UTF-16 code units (the part before an error). */
export function utf16Text(bytes: Uint8Array, bigEndian: boolean): string {
  const copy = Buffer.from(bytes);
  return (bigEndian ? copy.swap16() : copy).toString("utf16le");
}

const isHighSurrogate = (unit: number): boolean => unit >= 0xd800 && unit <= 0xdbff;
const isLowSurrogate = (unit: number): boolean => unit >= 0xdc00 && unit <= 0xdfff;
const hex = (unit: number): string => `0x${unit.toString(16).padStart(4, "0")}`;

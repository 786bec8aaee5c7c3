import { sep } from "node:path";
import { z } from "zod";
import { shownName } from "./shown-text.js";

declare const oneSegment: unique symbol;

/**
 * A file name that is one path segment, checked where it came in (Go's `filepath.IsLocal`, for one
 * element): not empty, not `.` or `..`, and holding no `/`, no NUL and no other separator of this
 * system, so that a path joined from it stays in its folder. Only `fileName` and `fileNameSchema` make
 * one: every name from outside (a remote listing, a folder of this machine, a record read back from
 * Redis) becomes one at that edge, and every path is built from one, never from the raw string.
 */
export type FileName = string & { readonly [oneSegment]: true };

/**
 * `\` is an ordinary character on Linux, where invoice-relay runs (the drop folder takes
 * `back\slash.csv`); on a system whose separator it is (`path.sep`), it is refused like `/`.
 */
function segmentProblem(raw: string): string | undefined {
  if (raw === "") return "is empty";
  if (raw === "." || raw === "..") return `is "${raw}", a name for a folder itself`;
  if (raw.includes("/") || raw.includes(sep)) return "holds a path separator: it would leave its folder";
  if (raw.includes("\0")) return "holds a NUL character, which no file name may";
  return undefined;
}

/** The name as a FileName, or undefined when it is not one path segment. */
export function fileName(raw: string): FileName | undefined {
  return segmentProblem(raw) === undefined ? (raw as FileName) : undefined;
}

/** A name read back from a record (Redis): parsed as a FileName, refused otherwise. */
export const fileNameSchema = z
  .string()
  .refine((raw) => segmentProblem(raw) === undefined, "is not one path segment")
  .transform((raw) => raw as FileName);

/**
 * The longest name a new file may have, in UTF-8 bytes: the names made from it (its claimed
 * `<batch id>--<name>`, `reports/<name>.<batch id>.summary.json` and their temporary names on the
 * server, up to 48 bytes more) must fit in the 255 bytes of a file name.
 */
export const MAX_NAME_BYTES = 200;

/** Why a new file's name is refused: it would leave its folder, is too long, or is not UTF-8 text. */
export type NameProblem = "not-one-segment" | "too-long" | "not-text";

export interface RefusedName {
  readonly problem: NameProblem;
  /** The name as it may be printed (shownName). */
  readonly shown: string;
  /** What is wrong and what to do, after "its name …". */
  readonly why: string;
}

/**
 * A new file's name, from a listing (a remote folder's, given as text, or the drop folder's, given as
 * bytes): a FileName when it is one path segment, UTF-8 text and at most MAX_NAME_BYTES long; else why
 * not. Bytes are judged as they are: only an invalid sequence is not UTF-8, and U+FFFD written as UTF-8
 * is a character like any other. Text comes decoded (an SFTP listing, a command line), bytes that are not
 * UTF-8 arriving as U+FFFD: such a name cannot be told from its bytes, nor named back to the server, so
 * it is refused as holding U+FFFD.
 */
export function admitName(raw: string | Buffer): FileName | RefusedName {
  const text = typeof raw === "string" ? raw : utf8(raw);
  if (text === undefined)
    return refused(raw, "not-text", "is not UTF-8 text; rename the file to a name in UTF-8");
  const problem = segmentProblem(text);
  if (problem !== undefined)
    return refused(raw, "not-one-segment", `${problem}; such a name is never used, rename the file`);
  if (typeof raw === "string" && text.includes("\uFFFD"))
    return refused(
      raw,
      "not-text",
      "holds U+FFFD (\uFFFD), which stands for bytes that are not UTF-8 where the name came from (an SFTP " +
        "listing, a command line), so the file cannot be named back; rename it to a UTF-8 name without that character",
    );
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > MAX_NAME_BYTES)
    return refused(
      raw,
      "too-long",
      `is too long: ${bytes} bytes, over the ${MAX_NAME_BYTES} the names made from it allow (its ` +
        "claimed file, its reports); rename the file to a shorter name",
    );
  return text as FileName;
}

export function isRefused(verdict: FileName | RefusedName): verdict is RefusedName {
  return typeof verdict !== "string";
}

function refused(raw: string | Buffer, problem: NameProblem, why: string): RefusedName {
  return { problem, shown: shownName(raw), why };
}

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function utf8(bytes: Buffer): string | undefined {
  try {
    return decoder.decode(bytes);
  } catch {
    return undefined;
  }
}

/** A file a pass leaves where it is, and why: the pass's output names it, and `run` does not exit 0. */
export interface LeftFile {
  /** `drop folder`, or `SFTP source acme`. */
  readonly where: string;
  /** The file's name as it may be printed (shownName). */
  readonly shown: string;
  /** What became of it and what to do: `left in the drop folder: its name is …`. */
  readonly why: string;
}

/** One line for a person: `SFTP source acme: bad.csv left on the server: its name …`. */
export function leftFileText(file: LeftFile): string {
  return `${file.where}: ${file.shown} ${file.why}`;
}

/** Each file left named once, however many polls of a pass named it. */
export function distinctLeft(files: readonly LeftFile[]): LeftFile[] {
  return [...new Map(files.map((f) => [leftFileText(f), f])).values()];
}

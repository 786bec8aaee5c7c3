import { RelayError } from "../errors/relay-error.js";

export interface FilePosition {
  readonly line?: number;
  readonly column?: number;
  readonly byteOffset?: number;
}

/**
 * What a message tells the operator to fix: the file, or, when it names the source profile setting that
 * would read the file as it is (`encoding:`, `delimiter:`, `header_row`), the file or that profile.
 */
export type FixIn = "file" | "file-or-profile";

const ENDINGS: Readonly<Record<FixIn, string>> = {
  file: "Fix the file and drop it again.",
  "file-or-profile": "Fix the file, or its source profile, and drop it again.",
};

/**
 * The file cannot be read as a whole (not text in its encoding, not JSON, required columns missing): none of its
 * records is trusted, and the file goes to `rejected/`.
 */
export class UnreadableFileError extends RelayError {
  readonly code = "FILE_UNREADABLE";

  constructor(
    readonly file: string,
    readonly problem: string,
    readonly position: FilePosition = {},
    fixIn: FixIn = "file",
  ) {
    super(`${file}${formatPosition(position)}: ${problem}. ${ENDINGS[fixIn]}`);
  }
}

function formatPosition({ line, column, byteOffset }: FilePosition): string {
  const parts: string[] = [];
  if (line !== undefined)
    parts.push(column === undefined ? `line ${line}` : `line ${line}, column ${column}`);
  if (byteOffset !== undefined) parts.push(`byte offset ${byteOffset}`);
  return parts.length === 0 ? "" : ` (${parts.join(", ")})`;
}

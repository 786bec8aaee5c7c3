import { RelayError } from "../errors/relay-error.js";

export interface FilePosition {
  readonly line?: number;
  readonly column?: number;
  readonly byteOffset?: number;
}

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
  ) {
    super(`${file}${formatPosition(position)}: ${problem}. Fix the file and drop it again.`);
  }
}

function formatPosition({ line, column, byteOffset }: FilePosition): string {
  const parts: string[] = [];
  if (line !== undefined)
    parts.push(column === undefined ? `line ${line}` : `line ${line}, column ${column}`);
  if (byteOffset !== undefined) parts.push(`byte offset ${byteOffset}`);
  return parts.length === 0 ? "" : ` (${parts.join(", ")})`;
}

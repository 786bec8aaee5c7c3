import { readFileSync, statSync, type Stats } from "node:fs";
import { readFile, stat } from "node:fs/promises";

/**
 * A secret setting given as a file (`X_FILE`, the convention of Docker and Kubernetes secrets): what is
 * read from it, or what is wrong with it, said so that the message names the file and the fix and never
 * holds the secret. The value is the file's text with surrounding whitespace removed (`echo key > file`
 * leaves a line break); the setting's own checks (src/config/load.ts) are applied to it afterwards.
 */
export type SecretFileRead =
  { readonly ok: true; readonly value: string } | { readonly ok: false; readonly problem: string };

/** A secret setting is one value (a key, a token, a URL): a file this long is not one. */
export const MAX_SECRET_FILE_BYTES = 64 * 1024;

/** The file's value now; `variable` is the X_FILE setting, named in the fix. Blocking: for start-up. */
export function readSecretFileSync(path: string, variable: string): SecretFileRead {
  try {
    const problem = statProblem(statSync(path), variable);
    return problem === undefined ? valueOf(readFileSync(path)) : { ok: false, problem };
  } catch (error) {
    return { ok: false, problem: ioProblem(error, variable) };
  }
}

/** The same, without blocking: for a secret read again while the process runs. */
export async function readSecretFile(path: string, variable: string): Promise<SecretFileRead> {
  try {
    const problem = statProblem(await stat(path), variable);
    return problem === undefined ? valueOf(await readFile(path)) : { ok: false, problem };
  } catch (error) {
    return { ok: false, problem: ioProblem(error, variable) };
  }
}

function statProblem(stats: Stats, variable: string): string | undefined {
  if (stats.isDirectory()) return `is a directory: point ${variable} at the file in it that holds the secret`;
  if (!stats.isFile()) return `is not a regular file: point ${variable} at the file that holds the secret`;
  if (stats.size > MAX_SECRET_FILE_BYTES)
    return `is larger than ${MAX_SECRET_FILE_BYTES / 1024} KiB: it holds more than one secret value; point ${variable} at the file of this secret alone`;
  return undefined;
}

function valueOf(bytes: Buffer): SecretFileRead {
  const value = bytes.toString("utf8").trim();
  if (value === "") return { ok: false, problem: "is empty: write the secret into it (one line)" };
  return { ok: true, value };
}

/** What is wrong with a secret file, from the error reading it raised. Pure. */
export function ioProblem(error: unknown, variable: string): string {
  const code = (error as { code?: unknown }).code;
  switch (code) {
    case "ENOENT":
    case "ENOTDIR":
      return `does not exist: mount the secret at that path, or point ${variable} at the file that holds it`;
    case "EACCES":
    case "EPERM":
      return (
        "cannot be read by this process (permission denied): give the user invoice-relay runs as read access " +
        "(a Compose secret's uid and mode, a Kubernetes secret volume's defaultMode or fsGroup)"
      );
    case "EISDIR":
      return `is a directory: point ${variable} at the file in it that holds the secret`;
    default:
      return `cannot be read (${typeof code === "string" ? code : "unknown error"}): check the path and its permissions`;
  }
}

import { readFile, stat } from "node:fs/promises";
import { RemoteSourceUnavailableError } from "./errors/remote-source-unavailable-error.js";
import type { RemoteSource } from "./remote-source.js";

/**
 * The largest key, passphrase or password file read: a private key is a few KiB (a 16384-bit RSA key in
 * OpenSSH's format is under 13 KiB), so a larger file is not one, and is refused, not read whole. The
 * same bound as a secret setting's file (src/config/secret-file.ts).
 */
export const MAX_CREDENTIAL_FILE_BYTES = 64 * 1024;

export type Credentials = { privateKey: Buffer; passphrase?: string } | { password: string };

/**
 * The key or password the source names, read now from its file or variable (a rotated secret is used
 * from the next connection on). One that cannot be read or used is a RemoteSourceUnavailableError
 * `secret`: the operator's to fix, never retried. No secret is ever in a message.
 */
export async function credentials(source: RemoteSource): Promise<Credentials> {
  const fail = (detail: string) => new RemoteSourceUnavailableError(source.name, "secret", detail);
  const auth = source.auth;
  if (auth.kind === "password-env") {
    const password = process.env[auth.passwordEnv];
    if (password === undefined) throw fail(`password_env names ${auth.passwordEnv}, which is not set`);
    return { password };
  }
  const read = async (field: string, path: string) => {
    const info = await stat(path).catch(() => undefined);
    if (info?.isDirectory() === true) throw fail(`${field} ${path} is a folder; name the file itself`);
    // Checked before reading: a FIFO (or a device such as /dev/stdin) would be read for ever.
    if (info !== undefined && !info.isFile())
      throw fail(`${field} ${path} is not a regular file; name the file that holds the key or password`);
    if (info !== undefined && info.size > MAX_CREDENTIAL_FILE_BYTES)
      throw fail(
        `${field} ${path} is larger than ${MAX_CREDENTIAL_FILE_BYTES / 1024} KiB, more than any key or ` +
          "password; name the file that holds it alone",
      );
    try {
      return await readFile(path);
    } catch {
      throw fail(`${field} ${path} cannot be read; check the path and its permissions`);
    }
  };
  if (auth.kind === "password-file")
    return {
      password: (await read("password_file", auth.passwordFile)).toString("utf8").replace(/\r?\n$/, ""),
    };
  const privateKey = await read("key_file", auth.keyFile);
  const passphrase =
    auth.passphraseFile === undefined
      ? undefined
      : (await read("passphrase_file", auth.passphraseFile)).toString("utf8").replace(/\r?\n$/, "");
  const { usablePrivateKey } = await import("./ssh-stack.js");
  if (!usablePrivateKey(privateKey, passphrase))
    throw fail(
      `key_file ${auth.keyFile} is not a private key this process can use` +
        (auth.passphraseFile === undefined
          ? " (is it protected by a passphrase? name it in passphrase_file)"
          : " with the passphrase in passphrase_file"),
    );
  return passphrase === undefined ? { privateKey } : { privateKey, passphrase };
}

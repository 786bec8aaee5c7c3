// The SSH libraries, in one module that the SFTP session imports only when a pass has SFTP sources:
// loading them costs every other command a tenth of a second.
import SftpClient from "ssh2-sftp-client";
import ssh2 from "ssh2";

export { SftpClient };

/** True when `key` is a private key ssh2 can use (with `passphrase` when it is protected). */
export function usablePrivateKey(key: Buffer, passphrase: string | undefined): boolean {
  return !(ssh2.utils.parseKey(key, passphrase) instanceof Error);
}

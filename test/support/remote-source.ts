import type { RemoteSource } from "../../src/ingest/sftp/remote-source.js";

/** What a test's SFTP server (a private sshd or a hostile one) gives a source to log in with. */
export interface TestServerLogin {
  readonly port: number;
  readonly user: string;
  readonly clientKeyFile: string;
}

/**
 * The source `acme` on the test's server at 127.0.0.1, polling `path`: logs in with the server's client
 * key, pins its host key by `fingerprint`, takes every file name, moves what it takes, sends no reports
 * back; `overrides` change any of that.
 */
export function acmeSource(
  server: TestServerLogin,
  path: string,
  fingerprint: string,
  overrides: Partial<RemoteSource> = {},
): RemoteSource {
  return {
    name: "acme",
    host: "127.0.0.1",
    port: server.port,
    user: server.user,
    path,
    auth: { kind: "key", keyFile: server.clientKeyFile },
    hostKey: { kind: "fingerprint", fingerprint },
    match: [],
    afterClaim: "move",
    reports: false,
    ...overrides,
  };
}

/**
 * An SFTP source (sources.yaml, `sftp:`; docs/sftp.md): where partners' files are taken from, how this
 * process proves who it is, which server it trusts, and what becomes of a file once it is safely here.
 * Secrets are named here (a file or a variable), never held: they are read when a connection is made.
 */
export interface RemoteSource {
  /** Names the source in logs, status, metrics and Redis names: `[a-z0-9][a-z0-9_-]*`. */
  readonly name: string;
  readonly host: string;
  readonly port: number;
  readonly user: string;
  /** The folder polled, absolute; processing/, archive/ and reports/ are made inside it. */
  readonly path: string;
  readonly auth: RemoteAuth;
  readonly hostKey: HostKeyPin;
  /** Globs on the file name (picomatch); a file matching none is left alone. Empty: every drop name. */
  readonly match: readonly string[];
  /** As DONE_MARKER_SUFFIX: a file is ready once `<name><suffix>` exists, written after it. */
  readonly doneMarker?: string | undefined;
  /** `move`: to processing/ at the claim, archive/ once reported; `delete`: removed at the claim. */
  readonly afterClaim: "move" | "delete";
  /** Upload each batch's results CSV and summary to reports/. */
  readonly reports: boolean;
  /**
   * `timeout_seconds`: how long the server may leave the handshake, the session or a request unanswered
   * before the connection is taken for dead (UNANSWERED_MS, 15 s, if absent).
   */
  readonly unansweredMs?: number | undefined;
}

export type RemoteAuth =
  | { readonly kind: "key"; readonly keyFile: string; readonly passphraseFile?: string | undefined }
  | { readonly kind: "password-file"; readonly passwordFile: string }
  | { readonly kind: "password-env"; readonly passwordEnv: string };

/** The server's host key: its `SHA256:` fingerprint, or the entries of a known_hosts file. */
export type HostKeyPin =
  | { readonly kind: "fingerprint"; readonly fingerprint: string }
  | { readonly kind: "known-hosts"; readonly file: string };

export function remoteFolders(source: RemoteSource): {
  processing: string;
  archive: string;
  reports: string;
} {
  const base = source.path === "/" ? "" : source.path;
  return { processing: `${base}/processing`, archive: `${base}/archive`, reports: `${base}/reports` };
}

/** `sftp://user@host:port/path`, as the operator wrote it (never with a secret in it). */
export function describeSource(source: RemoteSource): string {
  return `sftp://${source.user}@${source.host}:${source.port}${source.path}`;
}

import { z } from "zod";
import type { HostKeyPin, RemoteAuth, RemoteSource } from "./remote-source.js";

/** The fields of one `sftp:` source, in the order docs/sftp.md lists them. */
export const REMOTE_SOURCE_FIELDS = [
  "name",
  "url",
  "key_file",
  "passphrase_file",
  "password_file",
  "password_env",
  "host_key",
  "known_hosts",
  "match",
  "done_marker",
  "after_claim",
  "reports",
  "timeout_seconds",
] as const;

/**
 * timeout_seconds: at least a second (a round trip anywhere), at most ten minutes (a server silent longer
 * is down, and a pass waiting on it holds every other source and the drop folder).
 */
const [LEAST_TIMEOUT_S, MOST_TIMEOUT_S] = [1, 600];
const TIMEOUT_MESSAGE = `must be a whole number of seconds from ${LEAST_TIMEOUT_S} to ${MOST_TIMEOUT_S} (15 if absent)`;
const text = (what: string) =>
  z.string({ error: (i) => (i.input === undefined ? `is required: ${what}` : `must be ${what}`) });

const NAME = /^[a-z0-9][a-z0-9_-]{0,39}$/;
const FINGERPRINT = /^SHA256:[A-Za-z0-9+/]{43}=?$/;
const DONE_MARKER = /^\.[A-Za-z0-9_-][A-Za-z0-9._-]{0,31}$/;

/** One source as written (the YAML failsafe schema keeps every scalar a string). */
export const rawRemoteSourceSchema = z.strictObject({
  name: text("a short name such as acme (lower-case letters, digits, '-' and '_')").regex(
    NAME,
    "must be a short name such as acme: lower-case letters, digits, '-' and '_', at most 40",
  ),
  url: text("an address such as sftp://invoices@sftp.example.com:22/outgoing"),
  key_file: text("the path of a private key file").optional(),
  passphrase_file: text("the path of a file holding the key's passphrase").optional(),
  password_file: text("the path of a file holding the password").optional(),
  password_env: text("the name of an environment variable holding the password")
    .regex(
      /^[A-Za-z_][A-Za-z0-9_]*$/,
      "must be the name of an environment variable, such as ACME_SFTP_PASSWORD",
    )
    .optional(),
  host_key: text("the server's host key fingerprint, SHA256:…")
    .regex(FINGERPRINT, "must be a fingerprint as ssh-keygen -lf prints it: SHA256: then 43 characters")
    .optional(),
  known_hosts: text("the path of a known_hosts file").optional(),
  match: z.union([text("a glob on the file name"), z.array(text("a glob on the file name"))]).optional(),
  done_marker: text("a suffix such as .done")
    .regex(DONE_MARKER, "must be a suffix such as .done (a dot, then 1-32 letters, digits, '_', '.' or '-')")
    .optional(),
  after_claim: z
    .enum(["move", "delete"], { error: () => "must be move (to processing/, then archive/) or delete" })
    .optional(),
  reports: z.enum(["yes", "no", "true", "false"], { error: () => "must be yes or no" }).optional(),
  // read as text (YAML's failsafe schema): decimal digits only, so 1e3, 0x10 and 1.5 are refused
  timeout_seconds: z
    .string({ error: () => TIMEOUT_MESSAGE })
    .regex(/^\d+$/, TIMEOUT_MESSAGE)
    .transform(Number)
    .pipe(z.number().min(LEAST_TIMEOUT_S, TIMEOUT_MESSAGE).max(MOST_TIMEOUT_S, TIMEOUT_MESSAGE))
    .optional(),
});

export type RawRemoteSource = z.infer<typeof rawRemoteSourceSchema>;
const partialSchema = rawRemoteSourceSchema.partial();
/** A source's fields as far as they are valid (some may be missing). */
export type SomeRemoteSource = z.infer<typeof partialSchema>;

/**
 * The fields of an entry zod refused that are valid on their own, so the checks across fields still run
 * on them and every problem of the source is said at once.
 */
export function validFields(entry: Record<string, unknown>, refused: ReadonlySet<string>): SomeRemoteSource {
  const kept = Object.fromEntries(
    Object.entries(entry).filter(
      ([k]) => !refused.has(k) && (REMOTE_SOURCE_FIELDS as readonly string[]).includes(k),
    ),
  );
  const parsed = partialSchema.safeParse(kept);
  return parsed.success ? parsed.data : {};
}

export interface CheckedSource {
  readonly source?: RemoteSource;
  readonly problems: readonly { readonly path: readonly string[]; readonly problem: string }[];
}

/** The checks zod cannot say field by field: the address, one way to log in, one way to trust the server. */
export function checkRemoteSource(raw: SomeRemoteSource): CheckedSource {
  const problems: { path: string[]; problem: string }[] = [];
  const address = raw.url === undefined ? undefined : parseSftpUrl(raw.url);
  if (typeof address === "string") problems.push({ path: ["url"], problem: address });
  const auth = authOf(raw, problems);
  const hostKey = hostKeyOf(raw, problems);
  if (
    problems.length > 0 ||
    raw.name === undefined ||
    address === undefined ||
    typeof address === "string" ||
    auth === undefined ||
    hostKey === undefined
  )
    return { problems };
  const match = raw.match === undefined ? [] : typeof raw.match === "string" ? [raw.match] : raw.match;
  return {
    problems,
    source: {
      name: raw.name,
      ...address,
      auth,
      hostKey,
      match,
      doneMarker: raw.done_marker,
      afterClaim: raw.after_claim ?? "move",
      reports: raw.reports === "yes" || raw.reports === "true",
      unansweredMs: raw.timeout_seconds === undefined ? undefined : raw.timeout_seconds * 1000,
    },
  };
}

function authOf(
  raw: SomeRemoteSource,
  problems: { path: string[]; problem: string }[],
): RemoteAuth | undefined {
  const given = [raw.key_file, raw.password_file, raw.password_env].filter((v) => v !== undefined);
  if (given.length !== 1) {
    problems.push({
      path: [given.length === 0 ? "key_file" : "password_file"],
      problem:
        given.length === 0
          ? "is required: give key_file (a private key), or password_file or password_env (a password)"
          : "give only one of key_file, password_file and password_env",
    });
    return undefined;
  }
  if (raw.passphrase_file !== undefined && raw.key_file === undefined) {
    problems.push({ path: ["passphrase_file"], problem: "is the passphrase of key_file; give key_file too" });
    return undefined;
  }
  if (raw.key_file !== undefined)
    return { kind: "key", keyFile: raw.key_file, passphraseFile: raw.passphrase_file };
  if (raw.password_file !== undefined) return { kind: "password-file", passwordFile: raw.password_file };
  return { kind: "password-env", passwordEnv: raw.password_env ?? "" };
}

function hostKeyOf(
  raw: SomeRemoteSource,
  problems: { path: string[]; problem: string }[],
): HostKeyPin | undefined {
  if ((raw.host_key === undefined) === (raw.known_hosts === undefined)) {
    problems.push({
      path: ["host_key"],
      problem:
        raw.host_key === undefined
          ? "is required: pin the server's host key, host_key: SHA256:… (ssh-keygen -lf on the server's " +
            "public key, or ssh-keyscan -p PORT HOST | ssh-keygen -lf -) or known_hosts: a file"
          : "give only one of host_key and known_hosts",
    });
    return undefined;
  }
  return raw.host_key !== undefined
    ? { kind: "fingerprint", fingerprint: raw.host_key.replace(/=$/, "") }
    : { kind: "known-hosts", file: raw.known_hosts ?? "" };
}

/** host, port, user and path of `sftp://user@host:port/path`, or what is wrong with it. */
export function parseSftpUrl(
  text: string,
): { host: string; port: number; user: string; path: string } | string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "is not an address; write sftp://user@host:port/path, e.g. sftp://invoices@sftp.example.com:22/outgoing";
  }
  if (url.protocol !== "sftp:") return `must start with sftp://, not ${url.protocol}//`;
  if (url.password !== "")
    return "holds a password: a password is never written in the address; put it in password_file or password_env";
  if (url.username === "") return "names no user; write sftp://user@host/path";
  if (url.hostname === "") return "names no host";
  if (url.search !== "" || url.hash !== "") return "must not have a query (?) or fragment (#)";
  const decoded = percentDecoded(url.pathname, url.username);
  if (decoded === undefined)
    return "holds a % that starts no %XX escape; write a % in the user or path as %25";
  const path = decoded.path.replace(/\/+$/, "");
  return {
    host: url.hostname.replace(/^\[(.*)\]$/, "$1"),
    port: url.port === "" ? 22 : Number(url.port),
    user: decoded.user,
    path: path === "" ? "/" : path,
  };
}

/** The path and user percent-decoded; undefined when a `%` starts no escape (decodeURIComponent throws). */
function percentDecoded(path: string, user: string): { path: string; user: string } | undefined {
  try {
    return { path: decodeURIComponent(path), user: decodeURIComponent(user) };
  } catch {
    return undefined;
  }
}

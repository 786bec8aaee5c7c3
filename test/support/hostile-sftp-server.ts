// An SFTP server that lies, for what a real OpenSSH server cannot be made to do: list names holding `/`,
// NUL, `..` or an absolute path, and serve whatever path a client builds from them; serve a file shorter
// or longer than listed, or one that never ends, or a byte at a time; list a file a stat then finds
// gone, or dated otherwise, or growing at every listing; never answer a stat of a file once it was moved,
// or lose it once moved. Built on ssh2's own server side (its `Server` and SFTP stream), over a tree kept
// in memory; loopback only. `startSilentServer`: a server that takes the connection and never sends its
// banner.
import { createHash, timingSafeEqual } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type AddressInfo, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join, posix } from "node:path";
import ssh2, { type Attributes, type Connection, type SFTPWrapper } from "ssh2";

const { Server, utils } = ssh2;
const { OPEN_MODE, STATUS_CODE } = ssh2.utils.sftp;

/** A name a Linux file system refuses to hold: longer than this many bytes. */
const NAME_MAX = 255;

interface Node {
  readonly kind: "file" | "dir";
  data: Buffer;
  /** Seconds, as SFTP v3 sends them. */
  mtime: number;
  /** The size the server says the file has (stat, fstat, the listing), when it lies about it. */
  saidSize?: number;
  /** Reads of the file at or past this offset are never answered: a server stalled mid-download. */
  stallFrom?: number;
  /** Listed as a symbolic link. */
  link?: boolean;
  /** Other bytes of the same length at each opening for reading. */
  changing?: boolean;
  /** Reads past its content are answered with more rows, for ever. */
  endless?: boolean;
  /** A stat of it is never answered once the relay has moved it from where it was listed. */
  stallStatMoved?: boolean;
  /** Listed, but a stat or an opening of it finds nothing: gone between the listing and the stat. */
  goneAtStat?: boolean;
  /** The modification time (seconds) a stat or fstat says, other than the listing's. */
  statMtime?: number;
  /** Each listing shows it a row longer: a file being written for ever. */
  growing?: boolean;
  /** Gone from the server the moment the relay moves it (to the server's processing/). */
  goneOnceMoved?: boolean;
  /** Listed with no attributes at all (SFTP v3 allows it): no size, no time. */
  noAttributes?: boolean;
  /** Bytes served of it, by every read; and the furthest byte a read asked for (offset + length). */
  served: number;
  furthest: number;
}

/** How a listed file's server lies about it. */
export interface Lies {
  /** The size said by stat, fstat and the listing, whatever the file holds. */
  readonly size?: number;
  /** Reads at or past this offset are never answered (the connection itself stays up). */
  readonly stallFrom?: number;
  /** Listed as a symbolic link (`l`), its content served as the file it points to. */
  readonly link?: boolean;
  /** Each opening for reading serves other bytes of the same length (a file made as it is read). */
  readonly changing?: boolean;
  /** Reads past the content are answered with more rows, for ever (the listing says `size`, or the content's). */
  readonly endless?: boolean;
  /** A stat of the file is never answered once the relay has moved it (to the server's processing/). */
  readonly stallStatMoved?: boolean;
  /** Listed, but a stat or an opening of it finds nothing, at every pass (gone since the listing). */
  readonly goneAtStat?: boolean;
  /** A stat or fstat says this modification time (seconds), the listing the file's own: changed at stat. */
  readonly statMtime?: number;
  /** Each listing shows it a row longer, with a later time: a file still being written, for ever. */
  readonly growing?: boolean;
  /** The relay's move of it (to the server's processing/) succeeds, and the file is gone from then on. */
  readonly goneOnceMoved?: boolean;
  /** Listed with no attributes at all (SFTP v3 lets a server leave them out). */
  readonly noAttributes?: boolean;
}

export interface HostileSftpServer {
  readonly port: number;
  /** The host key's `SHA256:` fingerprint, as `ssh-keygen -lf` prints it. */
  readonly fingerprint: string;
  /** A private key the server accepts (OpenSSH format, no passphrase). */
  readonly clientKeyFile: string;
  readonly user: string;
  /** The folder the relay polls. */
  readonly inbox: string;
  url(): string;
  /** Lists `name` in the inbox exactly as given, and serves `content` at whatever path it resolves to. */
  list(name: string, content: string, mtime?: number, lies?: Lies): void;
  /** The content of a listed name still where it was listed, or undefined once moved or removed. */
  listed(name: string): Buffer | undefined;
  /** A file's content at an absolute path of the server (after the relay's moves), or undefined. */
  read(path: string): Buffer | undefined;
  /** Every file of the server, by path. */
  files(): string[];
  /** From now on, reads are answered at this rate (as HostileOptions.dripBytesPerSecond), or at once. */
  drip(bytesPerSecond: number | undefined): void;
  /** Of a listed name: the bytes its reads were answered with, and the furthest byte a read asked for. */
  served(name: string): { readonly bytes: number; readonly furthest: number } | undefined;
  close(): Promise<void>;
}

export interface HostileOptions {
  /** false: the login succeeds, but a session (the SFTP channel) is never answered. */
  readonly answerSessions?: boolean;
  /** How long each answer to a listing (a hundred names) takes: a slow server, or a far one. */
  readonly listingAnswerMs?: number;
  /** Reads are answered this many bytes a second, the whole server together, a quarter second apart. */
  readonly dripBytesPerSecond?: number;
}

export async function startHostileSftpServer(options: HostileOptions = {}): Promise<HostileSftpServer> {
  const dir = await mkdtemp(join(tmpdir(), "relay-hostile-sftp-"));
  const host = keyPair();
  const client = keyPair();
  const clientKeyFile = join(dir, "client_ed25519");
  await writeFile(clientKeyFile, client.private, { mode: 0o600 });
  const clientPublic = parsed(client.public).getPublicSSH();
  const hostBlob = parsed(host.public).getPublicSSH();
  const fingerprint = `SHA256:${createHash("sha256").update(hostBlob).digest("base64").replace(/=+$/, "")}`;
  const inbox = "/inbox";
  const tree = new Map<string, Node>([
    ["/", { kind: "dir", data: Buffer.alloc(0), mtime: 0, served: 0, furthest: 0 }],
    [inbox, { kind: "dir", data: Buffer.alloc(0), mtime: 0, served: 0, furthest: 0 }],
  ]);
  // Names listed as given, each with its file, served at the path a careless client builds from it.
  const listed = new Map<string, Node>();
  const rate = { dripBytesPerSecond: options.dripBytesPerSecond };
  // Each listed file's node by the name it was listed under, wherever the relay moves it since.
  const byName = new Map<string, Node>();
  const sockets = new Set<Connection>();
  const server = new Server({ hostKeys: [host.private] }, (conn) => {
    sockets.add(conn);
    (conn as Connection & { setNoDelay?: (on: boolean) => void }).setNoDelay?.(true); // answers go out at once
    conn.on("close", () => sockets.delete(conn));
    conn.on("error", () => undefined);
    conn.on("authentication", (ctx) => {
      if (ctx.method !== "publickey") {
        ctx.reject(["publickey"]);
        return;
      }
      const key = parsed(client.public);
      const same = ctx.key.data.length === clientPublic.length && timingSafeEqual(ctx.key.data, clientPublic);
      if (!same) {
        ctx.reject(["publickey"]);
        return;
      }
      // Without a signature the client only asks whether the key would do; with one, it must verify.
      const { blob, signature } = ctx;
      if (blob === undefined || signature === undefined || key.verify(blob, signature, ctx.hashAlgo))
        ctx.accept();
      else ctx.reject();
    });
    conn.on("ready", () => {
      conn.on("session", (accept) => {
        if (options.answerSessions === false) return;
        accept().on("sftp", (acceptSftp) => {
          serveSftp(acceptSftp(), tree, listed, inbox, options, rate);
        });
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    fingerprint,
    clientKeyFile,
    user: "partner",
    inbox,
    url: () => `sftp://partner@127.0.0.1:${port}${inbox}`,
    list: (name, content, mtime = Math.floor(Date.now() / 1000) - 60, lies = {}) => {
      const node: Node = {
        kind: "file",
        data: Buffer.from(content),
        mtime,
        served: 0,
        furthest: 0,
        ...(lies.endless === true ? { endless: true } : {}),
        ...(lies.size === undefined ? {} : { saidSize: lies.size }),
        ...(lies.stallFrom === undefined ? {} : { stallFrom: lies.stallFrom }),
        ...(lies.link === true ? { link: true } : {}),
        ...(lies.changing === true ? { changing: true } : {}),
        ...(lies.stallStatMoved === true ? { stallStatMoved: true } : {}),
        ...(lies.goneAtStat === true ? { goneAtStat: true } : {}),
        ...(lies.statMtime === undefined ? {} : { statMtime: lies.statMtime }),
        ...(lies.growing === true ? { growing: true } : {}),
        ...(lies.goneOnceMoved === true ? { goneOnceMoved: true } : {}),
        ...(lies.noAttributes === true ? { noAttributes: true } : {}),
      };
      listed.set(name, node);
      byName.set(name, node);
    },
    listed: (name) => listed.get(name)?.data,
    read: (path) => {
      const node = tree.get(path);
      return node?.kind === "file" ? node.data : undefined;
    },
    files: () => [...tree].filter(([, n]) => n.kind === "file").map(([p]) => p),
    drip: (bytesPerSecond) => {
      rate.dripBytesPerSecond = bytesPerSecond;
    },
    served: (name) => {
      const node = byName.get(name);
      return node === undefined ? undefined : { bytes: node.served, furthest: node.furthest };
    },
    close: async () => {
      for (const conn of sockets) conn.end();
      await new Promise<void>((resolve) =>
        server.close(() => {
          resolve();
        }),
      );
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * An ed25519 key pair that ssh2 reads back. Its generator writes about one pair in 400 that its own
 * parser refuses ("Malformed OpenSSH public key"); such a pair is made again.
 */
function keyPair(): { private: string; public: string } {
  for (;;) {
    const pair = utils.generateKeyPairSync("ed25519");
    if (!(utils.parseKey(pair.public) instanceof Error) && !(utils.parseKey(pair.private) instanceof Error))
      return pair;
  }
}

function parsed(key: string): ssh2.ParsedKey {
  const k = utils.parseKey(key);
  if (k instanceof Error) throw k;
  return Array.isArray(k) ? (k[0] as ssh2.ParsedKey) : k;
}

type Handle =
  | { readonly kind: "file"; readonly path: string }
  | { readonly kind: "dir"; readonly path: string; unsent?: [string, Node][] };

function serveSftp(
  sftp: SFTPWrapper,
  tree: Map<string, Node>,
  listed: Map<string, Node>,
  inbox: string,
  options: HostileOptions,
  rate: { dripBytesPerSecond: number | undefined },
) {
  const listingAnswerMs = options.listingAnswerMs ?? 0;
  // A drip: each answer a quarter second after the last, a quarter of the rate's bytes.
  const DRIP_MS = 250;
  let dripAt = 0;
  const handles = new Map<string, Handle>();
  // A path the tree does not hold is the file of the first listed name it resolves to: the lie.
  const listedAt = (path: string) => [...listed].find(([name]) => posix.join(inbox, name) === path);
  const lookup = (path: string) => tree.get(path) ?? listedAt(path)?.[1];
  let next = 0;
  const open = (reqid: number, handle: Handle) => {
    const id = Buffer.alloc(4);
    id.writeUInt32BE(next++);
    handles.set(id.toString("hex"), handle);
    sftp.handle(reqid, id);
  };
  const fail = (reqid: number, code: number) => {
    sftp.status(reqid, code);
  };
  const at = (path: string) => posix.normalize(path);
  const nameTooLong = (path: string) => Buffer.byteLength(posix.basename(path)) > NAME_MAX;
  const parentOf = (path: string) => tree.get(posix.dirname(path));
  const handleOf = (id: Buffer) => handles.get(id.toString("hex"));
  const forget = (path: string) => {
    if (!tree.delete(path)) listed.delete(listedAt(path)?.[0] ?? "");
  };

  sftp.on("REALPATH", (reqid, path) => {
    const abs = at(path === "." || path === "" ? "/" : path);
    sftp.name(reqid, [{ filename: abs, longname: abs, attrs: {} as Attributes }]);
  });
  const stat = (reqid: number, path: string) => {
    const node = lookup(at(path));
    if (node === undefined || node.goneAtStat === true) {
      fail(reqid, STATUS_CODE.NO_SUCH_FILE);
      return;
    }
    if (node.stallStatMoved === true && tree.has(at(path))) return;
    sftp.attrs(reqid, statAttrsOf(node));
  };
  sftp.on("STAT", stat);
  sftp.on("LSTAT", stat);
  sftp.on("FSTAT", (reqid, id) => {
    const h = handleOf(id);
    const node = h === undefined ? undefined : lookup(h.path);
    if (node === undefined) {
      fail(reqid, STATUS_CODE.FAILURE);
      return;
    }
    sftp.attrs(reqid, statAttrsOf(node));
  });
  sftp.on("OPENDIR", (reqid, path) => {
    if (tree.get(at(path))?.kind !== "dir") {
      fail(reqid, STATUS_CODE.NO_SUCH_FILE);
      return;
    }
    open(reqid, { kind: "dir", path: at(path) });
  });
  sftp.on("READDIR", (reqid, id) => {
    const h = handleOf(id);
    if (h?.kind !== "dir") {
      fail(reqid, STATUS_CODE.FAILURE);
      return;
    }
    if (h.unsent === undefined) {
      const names: [string, Node][] = h.path === inbox ? [...listed] : [];
      for (const [path, node] of tree)
        if (path !== "/" && posix.dirname(path) === h.path) names.push([posix.basename(path), node]);
      h.unsent = names;
    }
    // As OpenSSH's server does: at most 100 names an answer.
    const names = h.unsent.splice(0, 100);
    if (names.length === 0) {
      fail(reqid, STATUS_CODE.EOF);
      return;
    }
    for (const [, node] of names)
      if (node.growing === true) {
        node.data = Buffer.concat([node.data, Buffer.from(`GROWING-${node.data.length},EUR,DE,eu-10y\n`)]);
        node.mtime += 1;
      }
    const answer = names.map(([filename, node]) => ({
      filename,
      longname: `${node.kind === "dir" ? "d" : node.link === true ? "l" : "-"}rw-r--r-- 1 partner partner ${node.saidSize ?? node.data.length} Jan 1 00:00 ${filename}`,
      attrs: node.noAttributes === true ? ({} as Attributes) : attrsOf(node),
    }));
    setTimeout(() => {
      sftp.name(reqid, answer);
    }, listingAnswerMs);
  });
  sftp.on("OPEN", (reqid, path, flags) => {
    const file = at(path);
    if ((flags & OPEN_MODE.WRITE) === 0) {
      if (lookup(file)?.kind !== "file" || lookup(file)?.goneAtStat === true) {
        fail(reqid, STATUS_CODE.NO_SUCH_FILE);
        return;
      }
      const node = lookup(file);
      // The last digit before the end of its last line is counted on, keeping the length.
      if (node?.changing === true) {
        const at = node.data.length - 2;
        node.data[at] = 0x30 + (((node.data[at] ?? 0x30) - 0x30 + 1) % 10);
      }
      open(reqid, { kind: "file", path: file });
      return;
    }
    if (parentOf(file)?.kind !== "dir") {
      fail(reqid, STATUS_CODE.NO_SUCH_FILE);
      return;
    }
    if (nameTooLong(file)) {
      sftp.status(reqid, STATUS_CODE.FAILURE, "File name too long");
      return;
    }
    const exists = tree.get(file);
    if (exists !== undefined && (flags & OPEN_MODE.EXCL) !== 0) {
      fail(reqid, STATUS_CODE.FAILURE);
      return;
    }
    if (exists === undefined || (flags & OPEN_MODE.TRUNC) !== 0)
      tree.set(file, {
        kind: "file",
        data: Buffer.alloc(0),
        mtime: Math.floor(Date.now() / 1000),
        served: 0,
        furthest: 0,
      });
    open(reqid, { kind: "file", path: file });
  });
  sftp.on("READ", (reqid, id, offset, length) => {
    const h = handleOf(id);
    const node = h === undefined ? undefined : lookup(h.path);
    if (node === undefined) {
      fail(reqid, STATUS_CODE.FAILURE);
      return;
    }
    if (node.stallFrom !== undefined && offset + length > node.stallFrom) return;
    node.furthest = Math.max(node.furthest, offset + length);
    if (offset >= node.data.length && node.endless !== true) {
      fail(reqid, STATUS_CODE.EOF);
      return;
    }
    const drip = rate.dripBytesPerSecond;
    const bytes =
      node.endless === true
        ? Buffer.from(endlessBytes(node.data, offset, length))
        : node.data.subarray(
            offset,
            Math.min(
              node.data.length,
              offset + (drip === undefined ? length : Math.max(1, (drip * DRIP_MS) / 1000)),
            ),
          );
    const answer = () => {
      node.served += bytes.length;
      sftp.data(reqid, bytes);
    };
    if (drip === undefined) {
      answer();
      return;
    }
    dripAt = Math.max(Date.now(), dripAt) + DRIP_MS;
    setTimeout(answer, dripAt - Date.now());
  });
  sftp.on("WRITE", (reqid, id, offset, data) => {
    const h = handleOf(id);
    const node = h === undefined ? undefined : tree.get(h.path);
    if (node === undefined) {
      fail(reqid, STATUS_CODE.FAILURE);
      return;
    }
    const grown = Buffer.alloc(Math.max(node.data.length, offset + data.length));
    node.data.copy(grown);
    data.copy(grown, offset);
    node.data = grown;
    sftp.status(reqid, STATUS_CODE.OK);
  });
  sftp.on("CLOSE", (reqid, id) => {
    if (!handles.delete(id.toString("hex"))) {
      fail(reqid, STATUS_CODE.FAILURE);
      return;
    }
    sftp.status(reqid, STATUS_CODE.OK);
  });
  sftp.on("RENAME", (reqid, from, to) => {
    const node = lookup(at(from));
    if (node === undefined) {
      fail(reqid, STATUS_CODE.NO_SUCH_FILE);
      return;
    }
    if (tree.has(at(to)) || parentOf(at(to))?.kind !== "dir") {
      fail(reqid, STATUS_CODE.FAILURE);
      return;
    }
    if (nameTooLong(at(to))) {
      sftp.status(reqid, STATUS_CODE.FAILURE, "File name too long");
      return;
    }
    forget(at(from));
    if (node.goneOnceMoved !== true) tree.set(at(to), node);
    sftp.status(reqid, STATUS_CODE.OK);
  });
  sftp.on("REMOVE", (reqid, path) => {
    if (lookup(at(path))?.kind !== "file") {
      fail(reqid, STATUS_CODE.NO_SUCH_FILE);
      return;
    }
    forget(at(path));
    sftp.status(reqid, STATUS_CODE.OK);
  });
  sftp.on("MKDIR", (reqid, path) => {
    const dir = at(path);
    if (tree.has(dir) || parentOf(dir)?.kind !== "dir") {
      fail(reqid, STATUS_CODE.FAILURE);
      return;
    }
    tree.set(dir, {
      kind: "dir",
      data: Buffer.alloc(0),
      mtime: Math.floor(Date.now() / 1000),
      served: 0,
      furthest: 0,
    });
    sftp.status(reqid, STATUS_CODE.OK);
  });
  const ok = (reqid: number) => {
    sftp.status(reqid, STATUS_CODE.OK);
  };
  sftp.on("SETSTAT", ok);
  sftp.on("FSETSTAT", ok);
}

function attrsOf(node: Node): Attributes {
  return {
    mode: node.kind === "dir" ? 0o40755 : node.link === true ? 0o120777 : 0o100644,
    uid: 1000,
    gid: 1000,
    size: node.saidSize ?? node.data.length,
    atime: node.mtime,
    mtime: node.mtime,
  };
}

/** What a stat or fstat says of a node: the listing's attributes, but for a modification time it lies about. */
function statAttrsOf(node: Node): Attributes {
  const attrs = attrsOf(node);
  return node.statMtime === undefined ? attrs : { ...attrs, atime: node.statMtime, mtime: node.statMtime };
}

/** `length` bytes from `offset` of a file that is `data` and then the same row again and again, for ever. */
function endlessBytes(data: Buffer, offset: number, length: number): Buffer {
  const row = Buffer.from("ENDLESS,EUR,DE,eu-10y\n");
  const out = Buffer.alloc(length);
  for (let i = 0; i < length; i++) {
    const at = offset + i;
    out[i] = at < data.length ? (data[at] ?? 0) : (row[(at - data.length) % row.length] ?? 0);
  }
  return out;
}

/** A server that takes each connection and never says a word: no SSH banner, ever. Loopback only. */
export async function startSilentServer(): Promise<{ readonly port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on("error", () => undefined);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) =>
        server.close(() => {
          resolve();
        }),
      );
    },
  };
}

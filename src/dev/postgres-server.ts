import { execFile } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { chown, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { PostgresMissingError } from "./errors/postgres-missing-error.js";
import { freePort } from "./free-port.js";

const run = promisify(execFile);
const DEBIAN_ROOT = "/usr/lib/postgresql";

/** The folder of `initdb` and `pg_ctl`: on PATH, else the newest Debian install under /usr/lib/postgresql. */
export function findPostgresBin(): string | undefined {
  for (const dir of (process.env["PATH"] ?? "").split(":"))
    if (dir !== "" && existsSync(join(dir, "initdb")) && existsSync(join(dir, "pg_ctl"))) return dir;
  if (!existsSync(DEBIAN_ROOT)) return undefined;
  const versions = readdirSync(DEBIAN_ROOT)
    .filter((v) => existsSync(join(DEBIAN_ROOT, v, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(DEBIAN_ROOT, versions[0], "bin");
}

export interface PostgresServerOptions {
  /**
   * PostgreSQL's own durability settings (fsync, synchronous commit, full-page writes), as production
   * runs it: for benchmarks. Without it those are off, which tests can afford and which makes them faster.
   */
  readonly durable?: boolean;
}

/**
 * A private PostgreSQL server for tests, benchmarks and the demo: `initdb` into a temporary folder,
 * `pg_ctl start` on a free loopback port, trust authentication for the `postgres` user. PostgreSQL
 * refuses to run as root, so as root it runs as the `postgres` user (the Debian package creates it), in
 * a folder that user owns.
 */
export class PostgresServer {
  private constructor(
    private readonly bin: string,
    readonly dir: string,
    readonly port: number,
    private readonly asUser: readonly string[],
    private readonly durable: boolean,
  ) {}

  static async start(options: PostgresServerOptions = {}): Promise<PostgresServer> {
    const bin = findPostgresBin();
    if (bin === undefined) throw new PostgresMissingError([DEBIAN_ROOT]);
    const dir = await mkdtemp(join(tmpdir(), "invoice-relay-pg-"));
    const asUser: string[] = [];
    if (process.getuid?.() === 0) {
      const uid = Number((await run("id", ["-u", "postgres"])).stdout.trim());
      const gid = Number((await run("id", ["-g", "postgres"])).stdout.trim());
      await chown(dir, uid, gid);
      asUser.push("runuser", "-u", "postgres", "--");
    }
    const server = new PostgresServer(bin, dir, await freePort(), asUser, options.durable ?? false);
    await server.exec("initdb", ["-D", server.data, "-A", "trust", "-U", "postgres", "-E", "UTF8"]);
    await server.resume();
    return server;
  }

  /** Stops the server as an outage would (`pg_ctl stop -m fast`); its data stays for `resume`. */
  async pause(): Promise<void> {
    await this.exec("pg_ctl", ["-D", this.data, "-m", "fast", "-w", "stop"]);
  }

  /** Starts the server (again) on its port, with its data. */
  async resume(): Promise<void> {
    const settings = [
      `-p ${this.port}`,
      `-k ${this.dir}`,
      "-c listen_addresses=127.0.0.1",
      ...(this.durable ? [] : ["-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off"]),
      "-c max_connections=200",
    ].join(" ");
    await this.exec("pg_ctl", [
      "-D",
      this.data,
      "-o",
      settings,
      "-l",
      join(this.dir, "server.log"),
      "-w",
      "start",
    ]);
  }

  private get data(): string {
    return join(this.dir, "data");
  }

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  private async exec(tool: string, args: readonly string[]): Promise<void> {
    const command = [...this.asUser, join(this.bin, tool), ...args];
    const [file, ...rest] = command;
    await run(file ?? tool, rest, { cwd: this.dir, env: { ...process.env, LC_ALL: "C" } });
  }

  /** Stops the server at once (its data is thrown away) and removes its folder. */
  async dispose(): Promise<void> {
    await this.exec("pg_ctl", ["-D", this.data, "-m", "immediate", "-w", "stop"]).catch(() => undefined);
    await rm(this.dir, { recursive: true, force: true });
  }
}

import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { Socket } from "node:net";
import { Redis } from "ioredis";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DevServerError } from "./errors/dev-server-error.js";
import { freePort } from "./free-port.js";

/** A private `redis-server` process in its own temporary folder, for tests, the demo and benchmarks. */
export interface RedisServerOptions {
  /** Append-only file with fsync every second, as production should run it. */
  readonly aof?: boolean;
  readonly port?: number;
  readonly dir?: string;
  /**
   * More redis-server arguments, after the defaults so they win (e.g. `--cluster-enabled yes`). A
   * relative file name in them lands in the server's folder.
   */
  readonly args?: readonly string[];
}

const CANDIDATES = ["/usr/bin/redis-server", "/usr/local/bin/redis-server", "/usr/sbin/redis-server"];

/** The `redis-server` on PATH, else in a usual install location; its folder usually holds `redis-cli` too. */
export function findRedisServer(): string | undefined {
  for (const dir of (process.env["PATH"] ?? "").split(":")) {
    if (dir !== "" && existsSync(join(dir, "redis-server"))) return join(dir, "redis-server");
  }
  return CANDIDATES.find((p) => existsSync(p));
}

export class RedisServer {
  private child: ChildProcess | undefined;
  private ownsDir = false;

  private constructor(
    readonly binary: string,
    readonly port: number,
    readonly dir: string,
    readonly aof: boolean,
    private readonly extraArgs: readonly string[],
  ) {}

  static async start(options: RedisServerOptions = {}): Promise<RedisServer> {
    const binary = findRedisServer();
    if (binary === undefined) {
      throw new DevServerError(
        "No Redis for invoice-relay: set REDIS_URL to a running Redis, or install redis-server " +
          "(Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis).",
      );
    }
    const dir = options.dir ?? (await mkdtemp(join(tmpdir(), "invoice-relay-redis-")));
    // A free port may be taken by another process before redis-server binds it: then another port.
    for (let attempt = 1; ; attempt++) {
      const port = options.port ?? (await freePort());
      const server = new RedisServer(binary, port, dir, options.aof ?? false, options.args ?? []);
      server.ownsDir = options.dir === undefined;
      try {
        await server.launch();
        return server;
      } catch (error) {
        if (!(error instanceof PortTakenError) || options.port !== undefined || attempt >= PORT_ATTEMPTS)
          throw error;
      }
    }
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  private async launch(): Promise<void> {
    const args = [
      "--port", String(this.port),
      "--bind", "127.0.0.1",
      "--dir", this.dir,
      "--save", "",
      "--appendonly", this.aof ? "yes" : "no",
      "--appendfsync", "everysec",
      "--maxmemory-policy", "noeviction",
      "--daemonize", "no",
      "--protected-mode", "yes",
      "--logfile", join(this.dir, "redis.log"),
      ...this.extraArgs,
    ]; // prettier-ignore
    const child = spawn(this.binary, args, { stdio: "ignore" });
    this.child = child;
    const exited = new Promise<never>((_, reject) =>
      child.once("exit", (code) => {
        reject(new Error(`redis-server exited with code ${code} (log: ${this.dir}/redis.log)`));
      }),
    );
    exited.catch(() => undefined);
    await Promise.race([waitForPort(this.port, 10_000), exited]);
    // What answers on the port is this redis-server, not a process that took the port before it.
    const answering = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    answering.on("error", () => undefined);
    const info = await answering.info("server").catch(() => "");
    answering.disconnect();
    if (!info.includes(`process_id:${String(child.pid)}\r\n`)) {
      child.kill("SIGKILL");
      throw new PortTakenError(this.port);
    }
  }

  /** Stops Redis the way an operator would (SIGTERM: AOF flushed). */
  async stop(): Promise<void> {
    await this.signal("SIGTERM");
  }

  /** Kills Redis abruptly, as a crash would. */
  async kill(): Promise<void> {
    await this.signal("SIGKILL");
  }

  /**
   * Stops (or, `hard`, kills) Redis and starts it again on the same port and folder after `downMs`;
   * `whileDown` runs in between, e.g. to damage the AOF as a power loss would.
   */
  async restart(
    options: {
      readonly hard?: boolean;
      readonly downMs?: number;
      readonly whileDown?: () => Promise<void>;
    } = {},
  ): Promise<void> {
    await (options.hard === true ? this.kill() : this.stop());
    await options.whileDown?.();
    if (options.downMs !== undefined) await new Promise((r) => setTimeout(r, options.downMs));
    await this.launch();
  }

  /** Stops Redis and removes its folder (if this process made it). */
  async dispose(): Promise<void> {
    await this.stop();
    if (this.ownsDir) await rm(this.dir, { recursive: true, force: true });
  }

  private async signal(signal: NodeJS.Signals): Promise<void> {
    const child = this.child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) =>
      child.once("exit", () => {
        resolve();
      }),
    );
    child.kill(signal);
    await exited;
    this.child = undefined;
  }
}

async function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await answersPing(port)) return;
    if (Date.now() > deadline)
      throw new DevServerError(`redis-server did not answer on port ${port} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => {
      done(false);
    });
    socket.once("error", () => {
      done(false);
    });
    socket.connect(port, "127.0.0.1", () => socket.write("PING\r\n"));
    socket.once("data", (data) => {
      done(data.toString().startsWith("+PONG"));
    });
  });
}

/** Tries of a new free port when another process takes the one found first: a race, rarely twice. */
const PORT_ATTEMPTS = 3;

/** Another process answers on the port this redis-server was to listen on. */
class PortTakenError extends DevServerError {
  constructor(port: number) {
    super(`port ${String(port)} was taken by another process before redis-server could listen on it`);
  }
}

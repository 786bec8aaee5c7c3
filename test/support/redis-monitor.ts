import { connect, type Socket } from "node:net";

/** One MONITOR line: the command's arguments as bytes, and who sent it ("lua": a script). */
export interface Sighting {
  readonly args: readonly Buffer[];
  readonly source: string;
}

const ESCAPES: Record<string, number> = { n: 10, r: 13, t: 9, a: 7, b: 8, "\\": 92, '"': 34 };

/**
 * One MONITOR line as Redis prints it: `1700000000.123456 [0 127.0.0.1:5000] "SET" "k" "\x00"`, each
 * argument quoted as sdscatrepr quotes it (\n, \\, \", \xNN …).
 */
export function parseMonitorLine(line: string): Sighting {
  const open = line.indexOf("[");
  const close = line.indexOf("]", open);
  if (open < 0 || close < 0) throw new Error(`MONITOR printed a line with no source: ${line}`);
  const source = line.slice(open + 1, close).split(" ")[1] ?? "";
  const args: Buffer[] = [];
  let at = close + 1;
  while (at < line.length) {
    if (line[at] === " ") {
      at += 1;
      continue;
    }
    if (line[at] !== '"') throw new Error(`MONITOR printed an unquoted argument: ${line}`);
    const bytes: number[] = [];
    at += 1;
    for (; at < line.length && line[at] !== '"'; at++) {
      if (line[at] !== "\\") {
        bytes.push(line.charCodeAt(at));
      } else if (line[at + 1] === "x") {
        bytes.push(Number.parseInt(line.slice(at + 2, at + 4), 16));
        at += 3;
      } else {
        const byte = ESCAPES[line[at + 1] ?? ""];
        if (byte === undefined) throw new Error(`MONITOR quoted an argument unexpectedly: ${line}`);
        bytes.push(byte);
        at += 1;
      }
    }
    if (line[at] !== '"') throw new Error(`MONITOR printed an unterminated argument: ${line}`);
    at += 1;
    args.push(Buffer.from(bytes));
  }
  return { args, source };
}

/**
 * A MONITOR session on a plain socket of its own. (ioredis's monitor() reads the first monitor line as a
 * reply when it arrives in the same packet as MONITOR's OK, and fails with "Command queue state error".)
 */
export class RedisMonitor {
  private constructor(
    private readonly socket: Socket,
    private readonly listeners: Array<(sighting: Sighting) => void>,
  ) {}

  static async start(url: string): Promise<RedisMonitor> {
    const { hostname, port } = new URL(url);
    const socket = connect({ host: hostname, port: Number(port || 6379) });
    const listeners: Array<(sighting: Sighting) => void> = [];
    let pending = "";
    let started = false;
    await new Promise<void>((resolve, reject) => {
      socket.once("error", reject);
      socket.once("connect", () => socket.write("MONITOR\r\n"));
      socket.on("data", (chunk: Buffer) => {
        pending += chunk.toString("latin1");
        for (let end = pending.indexOf("\r\n"); end >= 0; end = pending.indexOf("\r\n")) {
          const line = pending.slice(0, end);
          pending = pending.slice(end + 2);
          if (line.startsWith("-")) reject(new Error(`MONITOR was refused: ${line.slice(1)}`));
          else if (!started) {
            started = line === "+OK";
            if (started) resolve();
            else reject(new Error(`MONITOR answered ${line}`));
          } else {
            const sighting = parseMonitorLine(line.slice(1));
            for (const listener of listeners) listener(sighting);
          }
        }
      });
    });
    return new RedisMonitor(socket, listeners);
  }

  onSighting(listener: (sighting: Sighting) => void): void {
    this.listeners.push(listener);
  }

  stop(): void {
    this.socket.destroy();
  }
}

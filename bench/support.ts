import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { z } from "zod";

export interface SimProcess {
  readonly url: string;
  readonly child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts bench/sim-process.js and waits for the URL it prints. */
export async function startSimProcess(apiKey: string): Promise<SimProcess> {
  const script = fileURLToPath(new URL("./sim-process.js", import.meta.url));
  const child = spawn(process.execPath, [script], {
    env: { ...process.env, INVOICE_API_KEY: apiKey },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const [line] = (await once(child.stdout ?? child, "data")) as [Buffer];
  const { url } = z.object({ url: z.string() }).parse(JSON.parse(line.toString().trim()));
  return {
    url,
    child,
    stop: async () => {
      child.kill("SIGTERM");
      await once(child, "exit");
    },
  };
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

export const round = (n: number): number => Math.round(n);

import { spawnEntry, describeExit, type Spawned } from "./processes.js";

const READY = "submission worker started";
const READY_WAIT_MS = 15_000;

/**
 * One submission worker (`dist/workers/submit-worker.js`) kept alive by the chaos run: it can be killed
 * with SIGKILL and is then started again. An exit nobody asked for is recorded (and the worker restarted)
 * so that the run can go on and still fail on it.
 */
export class WorkerSlot {
  private current: Spawned;
  private launches = 0;
  private stopping = false;
  private readonly meantToExit = new Set<Spawned>();
  kills = 0;
  readonly unexpected: string[] = [];

  constructor(
    readonly index: number,
    private readonly env: Readonly<Record<string, string>>,
  ) {
    this.current = this.launch();
  }

  private launch(): Spawned {
    this.launches++;
    const label = `worker ${this.index + 1} (run ${this.launches})`;
    const spawned = spawnEntry(label, "workers/submit-worker.js", [], this.env, READY);
    void spawned.exited.then((exit) => {
      if (this.stopping || this.meantToExit.has(spawned)) return;
      this.unexpected.push(`${label} exited by itself (${describeExit(exit)}):\n${spawned.tail()}`);
      this.current = this.launch();
    });
    return spawned;
  }

  /** Milliseconds since the current process said it was ready; undefined before that. */
  upFor(now = Date.now()): number | undefined {
    const at = this.current.readyAt();
    return at === undefined ? undefined : now - at;
  }

  pid(): number | undefined {
    return this.current.child.pid;
  }

  /** SIGKILL, as a crash or an OOM kill would; the replacement starts `pauseMs` after the old one is gone. */
  async killAndRestart(pauseMs: number): Promise<void> {
    const old = this.current;
    this.meantToExit.add(old);
    await old.stop("SIGKILL");
    this.kills++;
    await new Promise((r) => setTimeout(r, pauseMs));
    this.current = this.launch();
  }

  /** SIGTERM at the end: a worker stops taking jobs and exits 0; anything else is a finding. */
  async stop(): Promise<string | undefined> {
    this.stopping = true;
    // A process that has not set up its signal handlers yet dies of SIGTERM instead of stopping cleanly.
    await Promise.race([this.current.ready, new Promise((r) => setTimeout(r, READY_WAIT_MS))]);
    const exit = await this.current.stop("SIGTERM");
    return exit.code === 0
      ? undefined
      : `${this.current.label} did not stop cleanly on SIGTERM (${describeExit(exit)})`;
  }
}

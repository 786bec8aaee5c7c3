import type { Writable } from "node:stream";
import { OutputWriteError } from "./errors/output-write-error.js";

/**
 * Command output on stdout with backpressure. A reader that goes away early (`results | head`) closes
 * the pipe: the sink then reports itself closed and the command stops writing and exits quietly,
 * instead of dying on an unhandled EPIPE with a stack trace.
 */
export class OutputSink {
  private closed = false;
  private failure: Error | undefined;

  constructor(private readonly out: Writable) {
    // Kept for the life of the process: a destroyed stdout may still emit errors for writes in flight.
    out.on("error", (error: NodeJS.ErrnoException) => {
      this.closed = true;
      if (!QUIET_CODES.has(error.code ?? "")) this.failure ??= error;
    });
  }

  /** False once the reader is gone; callers stop producing output then. */
  get open(): boolean {
    // a destroyed stream may not have reported why yet (its error comes on a later tick)
    return !this.closed && !this.out.destroyed;
  }

  /** Writes, waiting for the stream to drain when its buffer is full. Resolves false if the reader left. */
  async write(text: string): Promise<boolean> {
    if (!this.open) return false;
    if (!this.out.write(text) && this.open) {
      await new Promise<void>((resolve) => {
        const done = () => {
          this.out.off("drain", done);
          this.out.off("close", done);
          this.out.off("error", done);
          resolve();
        };
        this.out.on("drain", done);
        this.out.on("close", done);
        this.out.on("error", done);
      });
    }
    return this.open;
  }

  /**
   * Ends the command's output: throws a write error other than the reader leaving (a full disk behind
   * `> file`, say). Waits one turn first, because a stream reports its error on a later tick.
   */
  async finish(): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    if (this.failure !== undefined)
      throw new OutputWriteError(`could not write the output: ${this.failure.message}`);
  }
}

/** The reader closed the pipe, or a write was attempted after that. */
const QUIET_CODES = new Set(["EPIPE", "ERR_STREAM_DESTROYED", "ERR_STREAM_WRITE_AFTER_END"]);

import type { Logger } from "../log/logger.js";

export interface ProgressState {
  readonly files: number;
  readonly filesDone: number;
  readonly invoices: number;
  readonly pending: number;
  readonly retrying: number;
}

/**
 * Progress of a run: a bar redrawn in place on a terminal, a structured log line every few seconds
 * otherwise (cron, CI, containers).
 */
export class Progress {
  private lastLog = 0;
  private drawn = false;

  constructor(
    private readonly stream: NodeJS.WriteStream,
    private readonly logger: Logger,
    private readonly logEveryMs = 5000,
  ) {}

  update(state: ProgressState): void {
    const done = Math.max(0, state.invoices - state.pending);
    if (this.stream.isTTY) {
      const width = 30;
      const share = state.invoices === 0 ? 1 : done / state.invoices;
      const bar = "#".repeat(Math.round(share * width)).padEnd(width, ".");
      const line = `[${bar}] ${done}/${state.invoices} invoices final, files ${state.filesDone}/${state.files}, retrying ${state.retrying}`;
      this.stream.write(`\r${line}\u001b[K`);
      this.drawn = true;
      return;
    }
    const now = Date.now();
    if (now - this.lastLog < this.logEveryMs) return;
    this.lastLog = now;
    this.logger.info({ ...state, final: done }, "progress");
  }

  end(): void {
    if (this.drawn) this.stream.write("\n");
    this.drawn = false;
  }
}

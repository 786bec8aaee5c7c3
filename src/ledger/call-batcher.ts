import { LedgerReplyError } from "./errors/ledger-reply-error.js";
/**
 * Runs the calls made within one turn of the event loop as one: a worker with many invoices in flight
 * hears many answers per turn, and recording them takes one Redis round trip and one script run instead
 * of one each. Every caller gets its own result; a run that fails fails each of its calls. A call waits
 * at most until the end of the turn (`setImmediate`), or not at all once `maxBatch` calls are waiting.
 */
export class CallBatcher<In, Out> {
  #waiting: Pending<In, Out>[] = [];

  constructor(
    private readonly runBatch: (inputs: readonly In[]) => Promise<readonly Out[]>,
    private readonly maxBatch = 256,
  ) {}

  call(input: In): Promise<Out> {
    return new Promise<Out>((resolve, reject) => {
      if (this.#waiting.length === 0) setImmediate(this.#flush);
      this.#waiting.push({ input, resolve, reject });
      if (this.#waiting.length >= this.maxBatch) this.#flush();
    });
  }

  readonly #flush = (): void => {
    const batch = this.#waiting;
    if (batch.length === 0) return; // already run when it reached maxBatch
    this.#waiting = [];
    this.#run(batch).catch((error: unknown) => {
      for (const call of batch) call.reject(error);
    });
  };

  async #run(batch: readonly Pending<In, Out>[]): Promise<void> {
    const outputs = await this.runBatch(batch.map((call) => call.input));
    if (outputs.length !== batch.length)
      throw new LedgerReplyError(`a batch of ${batch.length} calls came back with ${outputs.length} results`);
    batch.forEach((call, i) => {
      call.resolve(outputs[i] as Out);
    });
  }
}

interface Pending<In, Out> {
  readonly input: In;
  readonly resolve: (output: Out) => void;
  readonly reject: (error: unknown) => void;
}

import type { Answer } from "./answer.js";

/** The one thing the worker needs from the service: send this body under this key, say what came back. */
export interface Submitter {
  submit(idempotencyKey: string, body: string): Promise<Answer>;
  close(): Promise<void>;
}

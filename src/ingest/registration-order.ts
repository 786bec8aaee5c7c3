/**
 * A file's place in the order its rows are registered with the ledger. Across the files of a pass, the
 * first file to register an invoice is the one that sends it, and the first to register a version of an
 * external_id is the one whose version goes (the others come out `duplicate` or `conflict`): so files
 * ingested side by side still register one after another, in the order they were claimed (oldest
 * first), and the outcome is the one a pass taking them one at a time comes to. Files a pass finds
 * claimed already (resumed) and those it claims now are two orders of their own, so that a resumed file
 * whose read never returns holds no new file back (src/use-cases/drop-pass.ts).
 */
export interface RegistrationTurn {
  /** Resolves once every file claimed before this one has registered all it will register. */
  readonly before: Promise<void>;
  /** This file registers nothing more: the next file's turn comes. Called again, it does nothing. */
  done(): void;
}

/** Hands out turns in the order files are claimed. */
export class RegistrationOrder {
  #last: Promise<void> = Promise.resolve();

  next(): RegistrationTurn {
    let done: () => void = () => undefined;
    const finished = new Promise<void>((resolve) => {
      done = resolve;
    });
    const turn = { before: this.#last, done };
    this.#last = finished;
    return turn;
  }
}

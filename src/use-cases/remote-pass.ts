import { leftFileText, type LeftFile } from "../names/file-name.js";
import { RemoteClaims } from "../ledger/remote-claims.js";
import type { PulledFile } from "./ingest-claimed.js";
import {
  forOperator,
  pullRemoteSources,
  pullSettled,
  type RemotePullDeps,
  type RemoteRetake,
  type SourcePull,
} from "./remote-pull.js";

/** The SFTP sources as a pass sees them: take settled files first, report back at the end. */
export interface RemotePass {
  /**
   * Takes every settled file (with `settle`, polling again, a bounded number of times, files not settled
   * yet, then naming those still unsettled: remote-pull.ts, pullSettled): the batches whose
   * files are in processing/ for the drop pass to open, those taken now and any a cut pass left.
   */
  take(
    signal: AbortSignal | undefined,
    settle: boolean,
    /** Told of each source's files as soon as that source is done (with `settle`), before the others. */
    onPulled?: (files: ReadonlyMap<string, PulledFile>) => void,
    /**
     * Told of every file this take left on a server, at every take (a scan's record names them all;
     * the log says each at most every LEFT_FILE_REPEAT_MS).
     */
    onLeft?: (file: LeftFile) => void,
  ): Promise<ReadonlyMap<string, PulledFile>>;
  /**
   * Finishes claims, archives and uploads results of reported batches; lists nothing new. Returns the
   * files taken again now, whole, because their server copy grew or changed after their batch took it
   * (for the drop pass to open), and those still waiting to settle to be taken again.
   */
  finish(signal?: AbortSignal): Promise<RemoteFinish>;
  /** The sources that failed in this pass, the latest error of each. */
  failures(): ReadonlyMap<string, Error>;
  /**
   * Every batch whose file a source put in processing/ here, checked whole (a claim past its download,
   * or pulled): what the drop pass opens as pulled, even when its source failed after, never guessed lost.
   */
  held(): Promise<ReadonlyMap<string, PulledFile>>;
}

export interface RemoteFinish {
  readonly taken: ReadonlyMap<string, PulledFile>;
  readonly again: readonly RemoteRetake[];
}

/**
 * A file left on a server is said again at most this often by one process: every `run`, and once an
 * hour in `start` (which polls every few seconds): often enough to be in any hour of the log, rarely
 * enough not to drown it.
 */
export const LEFT_FILE_REPEAT_MS = 60 * 60 * 1000;

export function remotePass(
  deps: RemotePullDeps,
  /** Told of each file left on a server (the pass's output names them). */
  onLeft?: (file: LeftFile) => void,
): RemotePass {
  const failures = new Map<string, Error>();
  const said = new Map<string, number>();
  const note = (pulls: readonly SourcePull[], everyTime?: (file: LeftFile) => void) => {
    for (const p of pulls) {
      if (p.error !== undefined) failures.set(p.source, p.error);
      else failures.delete(p.source);
      for (const file of p.left ?? []) {
        everyTime?.(file);
        const key = leftFileText(file);
        if (Date.now() - (said.get(key) ?? -Infinity) < LEFT_FILE_REPEAT_MS) continue;
        said.set(key, Date.now());
        deps.logger.error({ source: p.source, file: file.shown }, key);
        onLeft?.(file);
      }
    }
  };
  return {
    take: async (signal, settle, onPulled, onTakeLeft) => {
      const pulls = settle
        ? await pullSettled(deps, signal, (pull) => {
            note([pull], onTakeLeft);
            onPulled?.(pull.unopened ?? new Map());
          })
        : await pullRemoteSources(deps, signal);
      if (!settle) note(pulls, onTakeLeft);
      return new Map(pulls.flatMap((p) => [...(p.unopened ?? [])]));
    },
    finish: async (signal) => {
      // A source that failed its attempts is asked once more (a report waits on it), not its attempts
      // again; one the operator must mend was said once already: asking it again says it again.
      const attempts = (source: string) => {
        const failed = failures.get(source);
        return failed === undefined ? undefined : forOperator(failed) ? 0 : 1;
      };
      const pulls = await pullRemoteSources(deps, signal, { take: false, attempts });
      note(pulls);
      const taken = new Set(pulls.flatMap((p) => p.batches));
      return {
        taken: new Map(pulls.flatMap((p) => [...(p.unopened ?? [])].filter(([id]) => taken.has(id)))),
        again: pulls.flatMap((p) => p.again ?? []),
      };
    },
    failures: () => failures,
    held: async () => {
      const held = new Map<string, PulledFile>();
      for (const source of deps.sources) {
        const claims = new RemoteClaims(deps.redis, deps.prefix, source.name);
        for (const c of (await claims.claims()).values()) if (c.step === "downloaded") held.set(c.batch, {});
        for (const [batch, p] of await claims.pulled())
          held.set(batch, p.sameAs === undefined ? {} : { sameContentAs: p.sameAs });
      }
      return held;
    },
  };
}

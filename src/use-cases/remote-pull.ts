import { coerceError } from "../errors/relay-error.js";
import { newBatchId } from "../ingest/drop-folder.js";
import { TakeWriteError } from "../ingest/errors/take-write-error.js";
import { HostKeyRefusedError } from "../ingest/sftp/errors/host-key-refused-error.js";
import { RemoteSourceUnavailableError } from "../ingest/sftp/errors/remote-source-unavailable-error.js";
import { withEarlierStalls } from "../ingest/sftp/connection-problem.js";
import { settleListing, type RemoteCandidate } from "../ingest/sftp/remote-settle.js";
import { remoteFolders, type RemoteSource } from "../ingest/sftp/remote-source.js";
import type { OpenSession, RemoteSession } from "../ingest/sftp/session.js";
import type { RedisClient } from "../ledger/redis-client.js";
import { RemoteClaims, type RemoteClaim, type RemoteSourceState } from "../ledger/remote-claims.js";
import { HostKeyRevokedError } from "../ingest/sftp/errors/host-key-revoked-error.js";
import { ledgerNow } from "../ledger/clock.js";
import { distinctLeft as distinct, type LeftFile } from "../names/file-name.js";
import { shownName } from "../names/shown-text.js";
import type { PulledFile } from "./ingest-claimed.js";
import { dropClaimsOfRefusedNames, finishClaimAlone, type ClaimDeps } from "./remote-claim.js";
import { unsettledWhy } from "./remote-take.js";
import { pauseWithin } from "../lifecycle/pass-signal.js";
import { finishPulledBatches } from "./remote-results.js";

export interface RemotePullDeps extends ClaimDeps {
  readonly redis: RedisClient;
  readonly prefix: string;
  readonly openSession: OpenSession;
  readonly sources: readonly RemoteSource[];
  readonly settleMs: number;
  /** RESULTS_RETENTION: how long a source's record of the content it gave is kept (none: for ever). */
  readonly retentionMs?: number | undefined;
  /** Connection attempts per source and pass, with backoff between them (default 3). */
  readonly attempts?: number | undefined;
  readonly backoffMs?: number | undefined;
}

/** What one pass over one source came to. */
export interface SourcePull {
  readonly source: string;
  readonly taken: number;
  /** The batch ids of the files taken: in processing/, ingested by the drop pass. */
  readonly batches: readonly string[];
  /**
   * Every batch of the source whose file is in processing/ with no batch record yet (those taken now,
   * and those a pass cut before its ingest left): the drop pass opens them as pulled.
   */
  readonly unopened?: ReadonlyMap<string, PulledFile> | undefined;
  /** Files whose server copy grew or changed after it was taken, waiting to settle to be taken again. */
  readonly again?: readonly RemoteRetake[] | undefined;
  /** Files seen but not settled yet (or waiting for their done-marker): polled again by `pullSettled`. */
  readonly waiting: number;
  /** Of those, the files changed since the last poll or first seen now. */
  readonly settling?: number | undefined;
  /** Set when the source could not be polled this pass (the others went on). */
  readonly error?: Error | undefined;
  /**
   * Files left on the server this pass, each with why: a name refused (said at every pass until the
   * file is renamed), or a step that failed for that file alone (the others went on).
   */
  readonly left?: readonly LeftFile[] | undefined;
  /**
   * Files listed and not taken for a reason that may pass (still being written; gone, or other than
   * listed, when asked for),
   * counted as settling: `pullSettled` names in `left` those its last poll still found so.
   */
  readonly unsettled?: readonly LeftFile[] | undefined;
  /** Another pass (of this process or another) held the source: it was not polled now. */
  readonly busy?: boolean | undefined;
}

/** A file of a source whose server copy is to be taken again, whole, as a new batch once it has settled. */
export interface RemoteRetake {
  readonly source: string;
  readonly file: string;
  /** The batch it is taken again as. */
  readonly batch: string;
  readonly size: number;
}

/**
 * One pass over every SFTP source, side by side, so a slow source never delays another: finish claims a
 * cut pass left, take every settled file, then archive and report back the batches whose reports are
 * written. Every wait of each ends with `signal` (the pass's deadline: src/lifecycle/pass-signal.ts),
 * the source then failing with what it was waiting for. A source that cannot be reached is tried
 * `attempts` times with backoff, its error recorded for `status`; it never stops the other sources or
 * the drop folder. A refused host key or login is not retried.
 */
export async function pullRemoteSources(
  deps: RemotePullDeps,
  signal?: AbortSignal,
  options: PullOptions = { take: true },
): Promise<SourcePull[]> {
  if (signal?.aborted === true) return [];
  const polled = deps.sources.filter((s) => attemptsFor(deps, options, s.name) > 0);
  return Promise.all(polled.map((source) => pullSource(deps, source, options, signal)));
}

function attemptsFor(deps: RemotePullDeps, options: PullOptions, source: string): number {
  return options.attempts?.(source) ?? deps.attempts ?? 3;
}

export interface PullOptions {
  /** false: only finish what earlier passes began, archive and report back; take no new file. */
  readonly take: boolean;
  /**
   * The attempts a source is given now (0: not polled; undefined: `attempts`): a pass gives each source
   * its attempts once, not again at every step.
   */
  readonly attempts?: ((source: string) => number | undefined) | undefined;
}

/**
 * One pass of `run`, or one scan of `start`: a file first seen now, still being written, without its
 * done-marker, or found gone or other than listed when asked for, is polled again once SETTLE_MS has passed (twice at most, so the
 * wait is bounded: 2 × (SETTLE_MS + 100 ms)); one the last poll still found so is named in `left`. Each
 * source is polled on its own, side by side, `onPulled` told of each as it is done.
 */
export async function pullSettled(
  deps: RemotePullDeps,
  signal?: AbortSignal,
  onPulled?: (pull: SourcePull) => void,
): Promise<SourcePull[]> {
  const one = async (source: RemoteSource): Promise<SourcePull[]> => {
    const alone = { ...deps, sources: [source] };
    let pulls = await pullRemoteSources(alone, signal);
    for (
      let round = 0;
      round < 2 &&
      pulls.some((p) => p.error === undefined && (p.waiting ?? 0) > 0) &&
      signal?.aborted !== true;
      round++
    ) {
      await pauseWithin(deps.settleMs + 100, signal);
      const again = await pullRemoteSources(alone, signal);
      pulls = again.map((p, i) => ({
        ...p,
        // Polled by another process's pass this round: what this pass last found stands.
        ...(p.busy === true
          ? {
              settling: pulls[i]?.settling,
              waiting: pulls[i]?.waiting ?? p.waiting,
              unsettled: pulls[i]?.unsettled,
            }
          : {}),
        taken: p.taken + (pulls[i]?.taken ?? 0),
        batches: [...(pulls[i]?.batches ?? []), ...p.batches],
        unopened: new Map([...(pulls[i]?.unopened ?? []), ...(p.unopened ?? [])]),
        left: distinct([...(pulls[i]?.left ?? []), ...(p.left ?? [])]),
      }));
    }
    pulls = pulls.map((p) => ({ ...p, left: distinct([...(p.left ?? []), ...(p.unsettled ?? [])]) }));
    for (const pull of pulls) onPulled?.(pull);
    return pulls;
  };
  return (await Promise.all(deps.sources.map(one))).flat();
}

async function pullSource(
  deps: RemotePullDeps,
  source: RemoteSource,
  options: PullOptions,
  signal?: AbortSignal,
): Promise<SourcePull> {
  const claims = new RemoteClaims(deps.redis, deps.prefix, source.name);
  const lease = await claims.lease();
  if (lease === undefined) return { source: source.name, taken: 0, batches: [], waiting: 0, busy: true };
  const attempts = attemptsFor(deps, options, source.name);
  const state = await claims.state();
  const failed: Error[] = [];
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        const done = await pollOnce(deps, claims, source, options, signal);
        await claims.setState({ ...cleared(state), lastPollAt: Date.now(), ...done.state });
        return { source: source.name, ...done.result };
      } catch (thrown) {
        const error = withEarlierStalls(failed, coerceError(thrown));
        failed.push(error);
        const final = attempt >= attempts || signal?.aborted === true || forOperator(error);
        deps.logger.error(
          { source: source.name, attempt, err: error.message },
          final ? "SFTP source failed this pass" : "SFTP source failed; trying again",
        );
        // The pass's end during the pause tries no more: what this attempt met is what is said.
        if (final || (await pauseWithin((deps.backoffMs ?? 1000) * 2 ** (attempt - 1), signal))) {
          await claims.setState({
            ...state,
            lastPollAt: Date.now(),
            lastError: error.message,
            lastErrorAt: Date.now(),
            failures: state.failures + 1,
          });
          return { source: source.name, taken: 0, batches: [], waiting: state.waiting, error };
        }
      }
    }
  } finally {
    await lease.release();
  }
}

/**
 * A failure only the operator can mend (a host key, a login, a key file, this machine's file system
 * full or read-only): never retried, said once.
 */
export function forOperator(error: Error): boolean {
  return (
    error instanceof TakeWriteError ||
    error instanceof HostKeyRefusedError ||
    error instanceof HostKeyRevokedError ||
    (error instanceof RemoteSourceUnavailableError &&
      (error.reason === "auth" || error.reason === "secret" || error.reason === "config"))
  );
}

function cleared(state: RemoteSourceState): RemoteSourceState {
  return { ...state, lastError: undefined, lastErrorAt: undefined, nextTryAt: undefined, failures: 0 };
}

async function pollOnce(
  deps: RemotePullDeps,
  claims: RemoteClaims,
  source: RemoteSource,
  options: PullOptions,
  signal: AbortSignal | undefined,
): Promise<{
  result: Omit<SourcePull, "source" | "error">;
  state: Partial<RemoteSourceState>;
}> {
  const session = await deps.openSession(source, signal);
  try {
    const folders = remoteFolders(source);
    await session.mkdirp(source.afterClaim === "move" ? folders.processing : source.path);
    if (source.afterClaim === "move") await session.mkdirp(folders.archive);
    if (source.reports) await session.mkdirp(folders.reports);
    if (deps.retentionMs !== undefined)
      await claims.forgetContentBefore((await ledgerNow(deps.redis, deps.now)) - deps.retentionMs);
    const where = `SFTP source ${source.name}`;
    const left: LeftFile[] = (await claims.dropUnreadableClaims()).map((raw) => ({
      where,
      shown: shownName(raw),
      why: "left on the server: an earlier version claimed it under a name that is not one path segment; that claim is dropped",
    }));
    left.push(...(await dropClaimsOfRefusedNames(deps, claims, source)));
    const batches: string[] = [];
    const failed = new Set<string>();
    const unsettled: LeftFile[] = [];
    let settling = 0;
    const take = async (claim: RemoteClaim) => {
      const end = await finishClaimAlone(deps, session, claims, source, claim, left);
      if (end === "taken") batches.push(claim.batch);
      else if (end === undefined) failed.add(claim.batch);
      else settling += 1;
      // One gone once its download began, or from the server's processing/, never comes back where a
      // later poll looks: named now.
      if (typeof end === "object")
        (end.vanished === true ? left : unsettled).push({
          where,
          shown: shownName(claim.name),
          why: `left on the server: ${end.left}`,
        });
    };
    for (const claim of (await claims.claims()).values()) await take(claim);
    const candidates = options.take ? await listCandidates(deps, session, claims, source) : [];
    for (const c of candidates) {
      if (c.readiness === "refused")
        left.push({ where, shown: shownName(c.entry.listed), why: `left on the server: ${c.why}` });
      // Polled again within the pass's bounded wait (pullSettled), then named if still so.
      if (c.readiness === "writing" || c.readiness === "unmarked")
        unsettled.push({
          where,
          shown: shownName(c.entry.listed),
          why: `left on the server: ${unsettledWhy(c, source)}`,
        });
      if (c.readiness !== "settled") continue;
      await take(
        await claims.begin(c.name, {
          batch: newBatchId(),
          name: c.name,
          size: c.entry.size,
          mtimeMs: c.entry.mtimeMs,
          step: "downloading",
        }),
      );
    }
    const taken = batches.length;
    settling += candidates.filter((c) => c.readiness === "writing").length;
    const waiting = settling + candidates.filter((c) => c.readiness === "unmarked").length;
    const reported = await finishPulledBatches(deps, session, claims, source);
    // A copy failing for itself this pass is named in `left`, not waited for as settling.
    const again = [...(await claims.claims()).values()]
      .filter((c) => c.settlingSince !== undefined && !failed.has(c.batch))
      .map((c) => ({ source: source.name, file: c.name, batch: c.batch, size: c.size }));
    const state = options.take ? { waiting } : {};
    return {
      result: {
        taken,
        batches,
        waiting,
        settling,
        unopened: reported.unopened,
        again,
        left: distinct([...left, ...reported.left]),
        unsettled,
      },
      state: { ...state, reportsPending: reported.pending, claimed: (await claims.state()).claimed + taken },
    };
  } finally {
    await session.close();
  }
}

/** The source's files and why each is taken or left (`check --source`), noting what this poll saw. */
export async function listCandidates(
  deps: Pick<RemotePullDeps, "settleMs">,
  session: RemoteSession,
  claims: RemoteClaims,
  source: RemoteSource,
  now = Date.now(),
): Promise<RemoteCandidate[]> {
  const entries = await session.list(source.path);
  const listing = settleListing(source, entries, await claims.seen(), deps.settleMs, now);
  await claims.saw(listing.seen);
  return listing.candidates;
}

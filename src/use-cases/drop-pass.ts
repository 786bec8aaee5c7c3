import { removeStaleCopies } from "../ingest/claim-copy.js";
import { claim, claimedFiles, readyFiles } from "../ingest/drop-folder.js";
import { leftFileText } from "../names/file-name.js";
import { takeChangedFilesAgain } from "./take-again.js";
import { RegistrationOrder } from "../ingest/registration-order.js";
import { InFlight } from "../ingest/files-in-flight.js";

import { ingestClaimed, type DropPassDeps, type PassedFile } from "./ingest-claimed.js";

export { ingestClaimed, type DropPassDeps, type PassedFile };
export type { PassResult } from "./ingest-claimed.js";

/**
 * Resumes files left in processing/ by a run that did not finish, names each drop file whose name is
 * refused (left where it is: `deps.onLeft`), then claims and ingests ready files,
 * then takes again, whole, each claimed file that grew or changed since its claim and has settled
 * (take-again.ts). Copies into processing/ whose copier died are removed on the way. Files are claimed
 * one by one, oldest first, and ingested side by side (files-in-flight.ts), each registering its rows
 * after the files claimed before it (registration-order.ts).
 */
export async function dropPass(
  deps: DropPassDeps,
  settleMs: number,
  {
    takeAgain = true,
    unrecorded,
  }: {
    /** `false`: the caller compares the claimed files with their claims itself, right after. */
    readonly takeAgain?: boolean;
    /** Which files in processing/ with no batch yet to open (resumeClaimedFiles); all if absent. */
    readonly unrecorded?: ((batch: string) => boolean) | undefined;
  } = {},
): Promise<PassedFile[]> {
  await removeStaleCopies(deps.folder, deps.logger);
  const passed = await resumeClaimedFiles(deps, unrecorded);
  const { ready, refused, notFiles } = await readyFiles(deps.folder, settleMs);
  for (const name of refused) {
    const left = {
      where: "drop folder",
      shown: name.shown,
      why: `left in the drop folder: its name ${name.why}`,
    };
    deps.logger.error({ file: name.shown, problem: name.problem }, leftFileText(left));
    deps.onLeft?.(left);
  }
  for (const entry of notFiles) {
    const left = {
      where: "drop folder",
      shown: entry.shown,
      why: `left in the drop folder: it is a ${entry.kind}, not a file; put the file itself there under another name`,
    };
    deps.logger.error({ file: entry.shown, kind: entry.kind }, leftFileText(left));
    deps.onLeft?.(left);
  }
  const order = new RegistrationOrder();
  const window = new InFlight();
  const claimed: PassedFile[] = [];
  for (const candidate of ready) {
    if (deps.signal?.aborted === true || window.failed) break; // stopping: claim nothing more
    const file = await claim(deps.folder, candidate.name);
    if (file === undefined) continue; // another process claimed it first
    deps.logger.info({ batch: file.batchId, file: file.name }, "claimed");
    const turn = order.next();
    const at = claimed.length;
    claimed.push({ file, result: { kind: "busy" } }); // until its ingest says what came of it
    await window.start(async () => {
      claimed[at] = { file, result: await ingestClaimed(deps, file, { turn, fresh: true }) };
    });
  }
  await window.settle();
  passed.push(...claimed);
  if (takeAgain && deps.signal?.aborted !== true)
    passed.push(...(await takeChangedFilesAgain(deps, settleMs)).passed);
  return passed;
}

/**
 * Ingests again, under the same batch id and so with the same keys, every file in processing/ whose
 * batch is not ingested: one a run left half-ingested, or one whose batch Redis has lost (a restart
 * without persistence, a failover to a stale replica). A file another process is ingesting comes back
 * `busy`.
 */
export async function resumeClaimedFiles(
  deps: DropPassDeps,
  /**
   * Which files with no batch yet to open now, by batch id (others are left: an SFTP source may be
   * putting them there now); all if absent.
   */
  unrecorded: (batch: string) => boolean = () => true,
): Promise<PassedFile[]> {
  const order = new RegistrationOrder();
  const window = new InFlight();
  const passed: (PassedFile | undefined)[] = [];
  for (const file of await claimedFiles(deps.folder)) {
    if (deps.signal?.aborted === true || window.failed) break;
    if (!unrecorded(file.batchId) && (await deps.batches.get(file.batchId)) === undefined) continue;
    const turn = order.next();
    const at = passed.push(undefined) - 1;
    await window.start(async () => {
      try {
        const meta = await deps.batches.get(file.batchId);
        if (meta !== undefined && meta.state !== "ingesting") return; // ingested: waiting for its report
        if (meta === undefined && deps.pulled?.has(file.batchId) === true)
          deps.logger.info({ batch: file.batchId, file: file.name }, "claimed (pulled from an SFTP source)");
        else if (meta === undefined)
          deps.logger.warn(
            { batch: file.batchId, file: file.name },
            "a file in processing/ has no batch in Redis (Redis lost data?); ingesting it again with the same keys",
          );
        else
          deps.logger.info({ batch: file.batchId, file: file.name }, "resuming a file left in processing/");
        passed[at] = { file, result: await ingestClaimed(deps, file, { turn }) };
      } finally {
        turn.done();
      }
    });
  }
  await window.settle();
  return passed.filter((p): p is PassedFile => p !== undefined);
}

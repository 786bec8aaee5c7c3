import { dropPass, resumeClaimedFiles, type DropPassDeps, type PassedFile } from "./drop-pass.js";
import type { RemotePass } from "./remote-pass.js";

/**
 * A pass's intake: the SFTP sources are taken side by side with the drop folder, each source's files
 * opened as soon as that source is done, so a slow source delays neither another source nor the drop
 * folder; every wait of the sources ends with `until` (the pass's deadline or a signal to stop). Files
 * in processing/ with no batch that no source took now (a pass or a source cut before their ingest, or
 * Redis lost them) are opened once all are done, those a source holds as pulled. The files that changed
 * since their claim are not looked for (the caller does, once). Throws what the drop pass throws, once
 * the sources are done.
 */
export async function passIntake(
  deps: DropPassDeps,
  remote: RemotePass | undefined,
  until: AbortSignal,
  settleMs: number,
  /** Until when drop files not ready yet are waited for (dropPass). */
  waitUntil?: number,
): Promise<PassedFile[]> {
  const opening: Promise<PassedFile[]>[] = [];
  const taking =
    remote?.take(until, true, (pulled) => {
      const opened = resumeClaimedFiles({ ...deps, pulled }, (batch) => pulled.has(batch));
      opened.catch(() => undefined); // awaited below
      opening.push(opened);
    }) ?? Promise.resolve(undefined);
  taking.catch(() => undefined); // awaited below, after the drop folder
  try {
    const passed = await dropPass(deps, settleMs, {
      takeAgain: false,
      waitUntil,
      unrecorded: remote === undefined ? undefined : () => false,
    });
    await taking;
    for (const opened of opening) passed.push(...(await opened));
    if (remote !== undefined)
      passed.push(...(await resumeClaimedFiles({ ...deps, pulled: await remote.held() })));
    return passed;
  } catch (error) {
    await taking.catch(() => undefined);
    await Promise.allSettled(opening);
    throw error;
  }
}

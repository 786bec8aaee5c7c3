import type { Config } from "../config/load.js";
import type { RemoteSource } from "../ingest/sftp/remote-source.js";
import { openSftpSession } from "../ingest/sftp/session.js";
import type { Logger } from "../log/logger.js";
import type { LeftFile } from "../names/file-name.js";
import { remotePass, type RemotePass } from "../use-cases/remote-pass.js";
import type { AppContext } from "./context.js";

/** The SFTP sources' pass of `run` and `start` over real SSH sessions; none without sources. */
export function openRemotePass(
  config: Config,
  ctx: AppContext,
  logger: Logger,
  sources: readonly RemoteSource[],
  onLeft?: (file: LeftFile) => void,
): RemotePass | undefined {
  if (sources.length === 0) return undefined;
  return remotePass(
    {
      ...ctx,
      logger,
      prefix: config.queuePrefix,
      openSession: openSftpSession,
      sources,
      settleMs: config.settleMs,
      retentionMs: config.resultsRetention,
    },
    onLeft,
  );
}

import { RelayError } from "../../errors/relay-error.js";

/** Another deployment (another QUEUE_PREFIX, or another Redis) serves this drop folder and holds its lease. */
export class DropFolderLeasedError extends RelayError {
  readonly code = "DROP_FOLDER_LEASED";

  constructor(
    readonly path: string,
    readonly ours: string,
    readonly theirs: string,
    leasePath: string,
    staleAfterS: number,
  ) {
    super(
      `the drop folder ${path} is served by another deployment (${theirs}); this one is ${ours}. ` +
        "Two deployments on one folder would send each file twice and overwrite each other's reports: give " +
        `this one a drop folder of its own (DROP_DIR), or stop the other. Its lease (${leasePath}) is ` +
        `taken over once it has not been renewed for ${staleAfterS} s.`,
    );
  }
}

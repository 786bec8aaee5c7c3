import { RelayError } from "../../errors/relay-error.js";

/** Who the drop folder's record names: its deployment and the process that last served it; or why it cannot be read. */
export type FolderOwner =
  { readonly deployment: string; readonly lastServed: string } | { readonly unreadable: string };

/**
 * The drop folder is another deployment's (another QUEUE_PREFIX, or another Redis), running or not; or
 * its record cannot be read, so whose it is is unknown. Nothing is taken from it.
 */
export class DropFolderOwnedError extends RelayError {
  readonly code = "DROP_FOLDER_OWNED";

  constructor(
    readonly path: string,
    readonly ours: string,
    readonly recordPath: string,
    readonly owner: FolderOwner,
  ) {
    super(
      "deployment" in owner
        ? `the drop folder ${path} belongs to another deployment (${owner.deployment}, ${owner.lastServed}); ` +
            `this one is ${ours}. A second deployment on one folder would send its files again (the ledger of ` +
            "what was sent is the first one's) and overwrite its reports: give this deployment a drop folder of " +
            `its own (DROP_DIR); or, if the other one is retired for good, hand the folder over to this one by ` +
            `removing ${recordPath}`
        : `the drop folder ${path} has a deployment record that cannot be read (${recordPath}: ${owner.unreadable}), ` +
            `so which deployment it belongs to is unknown; this one is ${ours}. If the folder is this ` +
            "deployment's alone, remove the record (the next start writes it again); else give this deployment " +
            "a drop folder of its own (DROP_DIR)",
    );
  }
}

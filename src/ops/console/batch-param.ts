import type { FastifyReply } from "fastify";
import { z } from "zod";
import { BATCH_ID_SHAPE, batchIdSchema } from "../../ledger/batch-id.js";
import type { Viewer } from "./layout.js";
import { sendProblem } from "./respond.js";

const batchParams = z.object({ id: batchIdSchema });

/**
 * The `:id` of a `/batches/:id…` route when it has the shape the relay gives batch ids, else undefined:
 * checked before any Redis name is built from it, so an address cannot reach another ledger name.
 */
export function batchIdParam(params: unknown): string | undefined {
  const parsed = batchParams.safeParse(params);
  return parsed.success ? parsed.data.id : undefined;
}

/** The 404 for an address whose batch id has not the shape of one. */
export function notABatchId(reply: FastifyReply, viewer: Viewer): FastifyReply {
  return sendProblem(
    reply,
    viewer,
    404,
    "No such batch",
    `That is not a batch id: a batch id looks like ${BATCH_ID_SHAPE}. The batches page lists them.`,
  );
}

/** A pass's id has the shape of a batch id (the time it started, six hex digits): checked alike. */
export function passIdParam(params: unknown): string | undefined {
  return batchIdParam(params);
}

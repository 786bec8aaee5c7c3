import { z } from "zod";
import { canonicalInvoiceSchema } from "../invoice/schema.js";
import { traceparentSchema } from "../tracing/trace-context.js";

/**
 * What a submission job carries: the document, the batch row that first enqueued it and, with tracing
 * on, the W3C traceparent of the invoice's trace and its count of requests sent (docs/operations.md,
 * "Traces"). Never a credential.
 */
export const invoiceJobDataSchema = z.strictObject({
  invoice: canonicalInvoiceSchema,
  batch: z.string().min(1),
  line: z.number().int().nonnegative(),
  trace: traceparentSchema.optional(),
  /**
   * With tracing on, the requests sent for this invoice by attempts that left it for another: what its
   * next attempt's span is numbered after (BullMQ's attempts leave out a 429's and a refused key's).
   */
  sent: z.number().int().nonnegative().optional(),
});

export type InvoiceJobData = z.infer<typeof invoiceJobDataSchema>;

export const INVOICE_JOB_NAME = "invoice";

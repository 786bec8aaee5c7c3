import { z } from "zod";
import { canonicalInvoiceSchema } from "../invoice/schema.js";
import { traceparentSchema } from "../tracing/trace-context.js";

/**
 * What a submission job carries: the document, the batch row that first enqueued it and, with tracing
 * on, the W3C traceparent of the invoice's trace (docs/operations.md, "Traces"). Never a credential.
 */
export const invoiceJobDataSchema = z.strictObject({
  invoice: canonicalInvoiceSchema,
  batch: z.string().min(1),
  line: z.number().int().nonnegative(),
  trace: traceparentSchema.optional(),
});

export type InvoiceJobData = z.infer<typeof invoiceJobDataSchema>;

export const INVOICE_JOB_NAME = "invoice";

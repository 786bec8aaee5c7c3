import { z } from "zod";
import { canonicalInvoiceSchema } from "../invoice/schema.js";

/** What a submission job carries: the document, and the batch row that first enqueued it. Never a credential. */
export const invoiceJobDataSchema = z.strictObject({
  invoice: canonicalInvoiceSchema,
  batch: z.string().min(1),
  line: z.number().int().nonnegative(),
});

export type InvoiceJobData = z.infer<typeof invoiceJobDataSchema>;

export const INVOICE_JOB_NAME = "invoice";

import { RelayError } from "../../errors/relay-error.js";

/** The service answered 401/403: the configured INVOICE_API_KEY is refused. Nothing is marked failed. */
export class ApiKeyRefusedError extends RelayError {
  readonly code = "API_KEY_REFUSED";

  constructor(
    readonly httpStatus: number,
    detail: string,
  ) {
    super(
      `the invoice service refused the API key (HTTP ${httpStatus}: ${detail}). Submitting is paused; ` +
        "fix INVOICE_API_KEY and run again: the waiting invoices resume with their original keys",
    );
  }
}

import { RelayError } from "../../errors/relay-error.js";

/** The health probes cannot listen at HTTP_ADDR for another reason: a host not of this machine, a privileged port. */
export class HttpAddrUnavailableError extends RelayError {
  readonly code = "HTTP_ADDR_UNAVAILABLE";

  constructor(
    readonly addr: string,
    reason: string,
    options?: ErrorOptions,
  ) {
    super(
      `HTTP_ADDR=${addr}: cannot listen there (${reason}); set HTTP_ADDR to an address of this host, such as ` +
        "127.0.0.1:9464 or 0.0.0.0:9464, or HTTP_ADDR=off to run without the health probes",
      options,
    );
  }
}

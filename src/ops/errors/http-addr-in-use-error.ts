import { RelayError } from "../../errors/relay-error.js";

/** The health probes' port is taken, most often by another invoice-relay on the same host. */
export class HttpAddrInUseError extends RelayError {
  readonly code = "HTTP_ADDR_IN_USE";

  constructor(
    readonly addr: string,
    options?: ErrorOptions,
  ) {
    super(
      `HTTP_ADDR=${addr}: the port is already in use (another invoice-relay on this host?); set HTTP_ADDR ` +
        "to a free host:port, or HTTP_ADDR=off to run without the health probes",
      options,
    );
  }
}

import { RelayError } from "../errors/relay-error.js";

/** Simulator options or a fault change that do not validate; the message names every bad option. */
export class SimulatorOptionsError extends RelayError {
  readonly code = "SIMULATOR_OPTIONS_INVALID";
}

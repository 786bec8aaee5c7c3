/**
 * The invoice routing service simulator: a strict local stand-in for the service of spec part A (plus the
 * developer-key bootstrap of part B), for the demo, the tests and the benchmarks.
 */
export { startSimulator, type SimulatorHandle, type SimulatorDependencies } from "./server.js";
export {
  DEFAULT_RULESET_VERSION,
  DEMO_API_KEY,
  NO_FAULTS,
  faultsPatchSchema,
  simulatorOptionsSchema,
  type Faults,
  type FaultsPatch,
  type SimulatorOptions,
} from "./options.js";
export { DEFAULT_CAPACITY, capacitySchema, type Capacity, type CapacityPatch } from "./capacity.js";
export { SimulatorOptionsError } from "./simulator-options-error.js";
export { simulatorStatsSchema, type SimulatorStats } from "./stats.js";
export type { Attempt, AttemptOutcome } from "./request-log.js";
export type { SimulatorEvents } from "./simulator-state.js";
export type { RulesetOutcome, Channel } from "./ruleset.js";
export { DEVELOPER_KEY_PREFIX, KEY_PREFIX_LENGTH } from "./developer-keys.js";
export { DEVELOPER_KEY_NOTE } from "./token-handler.js";
export { PROBLEM_TYPE_PREFIX, type Problem } from "./problem.js";

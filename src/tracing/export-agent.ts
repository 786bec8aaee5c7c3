import { readFile } from "node:fs/promises";
import * as http from "node:http";
import * as https from "node:https";
import { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { TracesClosedError } from "./errors/traces-closed-error.js";

/** Open until an exiting process has waited its bounded time for its last spans (src/tracing/otel-sdk.ts). */
export interface ExportGate {
  closed: boolean;
}

/**
 * The OTLP exporter's HTTP agent. Its sockets never keep the process alive (a request to a collector
 * that does not answer would hold an exit for the whole export timeout), and once the gate is closed it
 * refuses new connections with an error the exporter does not retry, so no retry outlives the exit by
 * more than the backoff already under way. With https it reads the standard certificate variables
 * (a custom agent replaces the exporter's own).
 */
export async function exportAgent(
  protocol: string,
  env: Readonly<Record<string, string | undefined>>,
  gate: ExportGate,
): Promise<http.Agent> {
  if (protocol === "http:") return new GatedHttpAgent(gate, { keepAlive: true });
  const file = (name: string) => {
    const path = env[`OTEL_EXPORTER_OTLP_TRACES_${name}`] ?? env[`OTEL_EXPORTER_OTLP_${name}`];
    return path === undefined || path.trim() === "" ? undefined : readFile(path.trim());
  };
  const [ca, cert, key] = await Promise.all([
    file("CERTIFICATE"),
    file("CLIENT_CERTIFICATE"),
    file("CLIENT_KEY"),
  ]);
  return new GatedHttpsAgent(gate, {
    keepAlive: true,
    ...(ca === undefined ? {} : { ca }),
    ...(cert === undefined ? {} : { cert }),
    ...(key === undefined ? {} : { key }),
  });
}

type Created = (error: Error | null, stream: Duplex) => void;

/** A new connection, unreferenced; or none, refused through the callback, once the gate is closed. */
function connect(gate: ExportGate, open: () => Duplex | null | undefined, callback?: Created) {
  if (gate.closed) {
    process.nextTick(() => {
      callback?.(new TracesClosedError(), new Socket());
    });
    return undefined;
  }
  return unref(open());
}

function unref(stream: Duplex | null | undefined): Duplex | null | undefined {
  if (stream instanceof Socket) stream.unref();
  return stream;
}

class GatedHttpAgent extends http.Agent {
  constructor(
    private readonly gate: ExportGate,
    options: http.AgentOptions,
  ) {
    super(options);
  }

  override createConnection(options: http.ClientRequestArgs, callback?: Created): Duplex | null | undefined {
    return connect(this.gate, () => super.createConnection(options, callback), callback);
  }

  // Node refs a kept-alive socket again each time it is reused.
  override reuseSocket(socket: Duplex, request: http.ClientRequest): void {
    super.reuseSocket(socket, request);
    unref(socket);
  }
}

class GatedHttpsAgent extends https.Agent {
  constructor(
    private readonly gate: ExportGate,
    options: https.AgentOptions,
  ) {
    super(options);
  }

  override createConnection(options: https.RequestOptions, callback?: Created): Duplex | null | undefined {
    return connect(this.gate, () => super.createConnection(options, callback), callback);
  }

  override reuseSocket(socket: Duplex, request: http.ClientRequest): void {
    super.reuseSocket(socket, request);
    unref(socket);
  }
}

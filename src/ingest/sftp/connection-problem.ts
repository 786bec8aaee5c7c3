import { RemoteSourceUnavailableError } from "./errors/remote-source-unavailable-error.js";

/**
 * What went wrong reaching a server, in an operator's words: from the socket's error code or ssh2's
 * stage (`level`), never the library's own sentence. `server` is `host:port`.
 */
export function connectionProblem(server: string, code: unknown, level: unknown): string {
  const host = server.replace(/:\d+$/, "");
  switch (code) {
    case "ECONNREFUSED":
      return `nothing listens at ${server} (the connection was refused); check the url and the network`;
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return `the host name ${host} cannot be resolved; check the url and the DNS`;
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return `${server} cannot be reached from here (no route); check the url and the network`;
    case "ECONNRESET":
    case "EPIPE":
      return `${server} closed the connection before it was set up; is it an SSH server, and does it accept this machine?`;
    case "ETIMEDOUT":
      return `${server} did not answer; check the url, the network and any firewall`;
  }
  if (level === "sftp-session")
    return `${server} accepted the login but opened no SFTP session within 15 s; is its SFTP subsystem on, and is it overloaded? Ask its operator`;
  if (level === "client-timeout")
    return `${server} did not finish the SSH handshake in time; is it an SSH server, and does a firewall hold the connection?`;
  if (level === "handshake" || level === "protocol")
    return `${server} and this process found no SSH protocol in common (ciphers, key exchange); ask its operator`;
  return `the connection to ${server} failed (${typeof code === "string" ? code : "no reason given"}); check the url and the network`;
}

/**
 * A server that left a request unanswered for its patience: "host:port answered nothing for 15 s while
 * asked to read /in/a.csv".
 */
export function unansweredClause(server: string, patienceMs: number, step: string): string {
  return `${server} answered nothing for ${patienceMs / 1000} s while asked to ${step}`;
}

/**
 * What a source's attempts of one pass came to, said as the `last` one's error: each step an `earlier`
 * attempt found unanswered is named first, so a retry that stopped elsewhere (another step, the
 * deadline while connecting) never hides the step the server did not answer.
 */
export function withEarlierStalls(earlier: readonly Error[], last: Error): Error {
  if (!(last instanceof RemoteSourceUnavailableError)) return last;
  const stalls = new Set<string>();
  for (const error of earlier)
    if (error instanceof RemoteSourceUnavailableError && error.unanswered !== undefined)
      stalls.add(error.unanswered);
  stalls.delete(last.unanswered ?? "");
  if (stalls.size === 0) return last;
  return new RemoteSourceUnavailableError(
    last.source,
    last.reason,
    `${[...stalls].join("; then ")}; at the retry, ${last.detail}`,
    last.unanswered,
  );
}

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

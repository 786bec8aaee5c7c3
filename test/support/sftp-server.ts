// The private OpenSSH server lives with the other private servers (src/dev/), for the benchmark too.
export { startSftpServer, sshdAvailable, SSHD, type SftpServer } from "../../src/dev/sftp-server.js";

// Why serve could not listen, in one line for the person who gave --host and --port: what is
// wrong with the address, and what to write instead. Never a stack trace: nothing here is a bug.
import { originOf } from './options.js';

/** serve's exit code when it cannot listen: the command line asks for what this machine cannot give (docs/behaviour.md, "Values on the command line": exit 2, as for its usage errors), not an error of the configuration (1). */
export const LISTEN_FAILED_EXIT_CODE = 2;

export function listenFailure(error: NodeJS.ErrnoException, host: string, port: number): string {
  const origin = originOf(host, port);
  switch (error.code) {
    case 'EADDRINUSE':
      return `cannot listen on ${origin}: the port is already in use by another process; stop it, choose another --port, or pass --port 0 for any free port`;
    case 'EADDRNOTAVAIL':
      return `cannot listen on ${host}: it is not an address of this machine; give --host one of its own addresses, such as 127.0.0.1, or 0.0.0.0 for all of them`;
    case 'EACCES':
      return `cannot listen on ${origin}: permission denied (ports below 1024 need privileges); choose a --port from 1024 up`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `cannot listen on ${host}: the host name does not resolve to an address; give --host an address, such as 127.0.0.1 or 0.0.0.0`;
    default:
      return `cannot listen on ${origin}: ${error.message}`;
  }
}

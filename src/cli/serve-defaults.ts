// Defaults of serve's options as the help shows them, in the unit the option takes, and read with
// the option's own parser: the help cannot show a value that the option would refuse (README.md,
// "Serve the example"). Apart from the command line and the action, since both read them.
import { formatSize } from '../units.js';

export const DEFAULT_MAX_BODY_SIZE = formatSize(10 * 1024 * 1024);
/** A share of memory per process that a few dozen bodies of the largest size fit in; --max-body-size when that is larger. */
export const DEFAULT_MAX_INFLIGHT_BODY_SIZE = formatSize(256 * 1024 * 1024);
export const DEFAULT_REQUEST_TIMEOUT = '60s';
export const DEFAULT_SHUTDOWN_TIMEOUT = '30s';

// A body's reading may be held for several reasons at once (the parser's back-pressure, a
// file's pending write, a wait for budget): the request is paused by the first and resumed when
// the last lets go, unless the read has ended meanwhile.

import type { Readable } from 'node:stream';

export interface ReadPauses {
  /** One more reason to hold the reading. */
  readonly block: () => void;
  /** One reason fewer; the last resumes the request, unless `ended()`. */
  readonly unblock: () => void;
}

export function readPauses(request: Readable, ended: () => boolean): ReadPauses {
  let blocked = 0;
  return {
    block: () => {
      if (blocked++ === 0) request.pause();
    },
    unblock: () => {
      if (--blocked === 0 && !ended()) request.resume();
    },
  };
}

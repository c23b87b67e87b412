// The one loop that reads a body's bytes off the request for both readers (whole.ts,
// multipart.ts): counts them against --max-body-size, charges each chunk to the body's
// share of the budget (budget.ts) before passing it on, and while a chunk waits for room
// keeps the request paused and the end of the body behind it.
//
// Its life is tied to the request's: the response's 'close' (answered by anyone, timed out,
// the socket gone) ends the reading as much as the request's own 'error' or 'aborted'. Once a
// response is finished node detaches the request from its socket, so a body still arriving then
// would never see another event, and its charge and temporary files would be held for good.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BodyCharge } from './budget.js';
import { INCOMPLETE, noRoom, tooLarge, type BodyIntake, type Refusal } from './intake.js';

/** Where the chunks go. Called only while reading: never after `stop`. */
export interface ChunkSink {
  /** A chunk the budget has room for, in order. */
  chunk(chunk: Buffer): void;
  /** The body ended, and every chunk of it has been passed on. */
  end(): void;
  /** Reading ends with this refusal (too large, no room, not received completely). */
  refused(refusal: Refusal): void;
  /** Hold the request while a chunk waits for room. */
  pause(): void;
  resume(): void;
}

/** Reads `request` into `sink` until the end, a refusal or `stop()`. */
export class ChargedChunks {
  private size = 0;
  private stopped = false;
  /** A chunk waiting for room; the end of the body, if it came meanwhile, waits for it. */
  private waiting = false;
  private ended = false;

  constructor(
    private readonly request: IncomingMessage,
    private readonly response: ServerResponse,
    private readonly intake: BodyIntake,
    private readonly charge: BodyCharge,
    private readonly sink: ChunkSink,
  ) {
    request.on('data', this.onData);
    request.on('end', this.onEnd);
    request.on('error', this.onError);
    request.on('aborted', this.onError);
    response.on('close', this.onError);
  }

  /** No more chunks are read (the listeners go; the request is left paused). */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    const request = this.request;
    request.off('data', this.onData);
    request.off('end', this.onEnd);
    request.off('error', this.onError);
    request.off('aborted', this.onError);
    this.response.off('close', this.onError);
    request.pause();
  }

  private readonly onData = (chunk: Buffer): void => {
    this.size += chunk.length;
    const maxBytes = this.intake.maxBytes;
    if (this.size > maxBytes) return this.sink.refused(tooLarge(maxBytes));
    const granted = this.charge.arrived(chunk.length);
    if (granted === true) return this.sink.chunk(chunk);
    this.waiting = true;
    this.sink.pause();
    void granted.then((ok) => {
      this.waiting = false;
      if (this.stopped) return;
      if (!ok) return this.sink.refused(noRoom(this.intake.budget));
      this.sink.chunk(chunk);
      if (this.ended) this.sink.end();
      if (!this.stopped) this.sink.resume();
    });
  };

  private readonly onEnd = (): void => {
    this.ended = true;
    if (!this.waiting) this.sink.end();
  };

  private readonly onError = (): void => this.sink.refused(INCOMPLETE);
}

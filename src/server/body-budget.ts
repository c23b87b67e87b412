// --max-inflight-body-size: the bytes of request bodies one process holds in memory at once,
// summed over its requests (docs/behaviour.md, "Request bodies and uploads"). A body is charged
// as it arrives; the bytes of an upload that go to a temporary file, or of a file no task reads,
// are given back as soon as they are written or dropped; what stays (parameters, small uploads)
// is given back when the request's uploads are released (upload.ts). A body that does not fit
// waits briefly for others to finish, then is refused with a 503.

/** How long a body waits for room before it is refused. */
export const BODY_WAIT_MS = 2000;
/** Retry-After of that 503, in seconds. */
export const BODY_RETRY_AFTER_S = 2;

interface Waiter {
  readonly bytes: number;
  readonly resolve: (granted: boolean) => void;
  readonly timer: NodeJS.Timeout;
}

export class BodyBudget {
  private inflight = 0;
  private refused = 0;
  /** Bodies already being read that need more: served before new bodies. */
  private readonly growing: Waiter[] = [];
  /** New bodies, first come first served. */
  private readonly admitting: Waiter[] = [];

  constructor(
    readonly limit: number,
    private readonly waitMs = BODY_WAIT_MS,
  ) {}

  /** Bytes of bodies held now. */
  get bytesInFlight(): number {
    return this.inflight;
  }

  /** Bodies waiting for room now. */
  get waiting(): number {
    return this.growing.length + this.admitting.length;
  }

  /** Bodies refused because they did not fit. */
  get refusals(): number {
    return this.refused;
  }

  /** Room for a new body: at once when it fits and nobody waits, else after a wait (false: no room came). */
  admit(bytes: number): true | Promise<boolean> {
    if (this.growing.length === 0 && this.admitting.length === 0 && this.fits(bytes)) return this.take(bytes);
    return this.wait(this.admitting, bytes);
  }

  /** More room for a body being read. */
  grow(bytes: number): true | Promise<boolean> {
    if (this.growing.length === 0 && this.fits(bytes)) return this.take(bytes);
    return this.wait(this.growing, bytes);
  }

  give(bytes: number): void {
    if (bytes <= 0) return;
    this.inflight -= bytes;
    this.wake();
  }

  /** Counts a body refused for want of room (the caller answers it). */
  countRefusal(): void {
    this.refused++;
  }

  private fits(bytes: number): boolean {
    return this.inflight + bytes <= this.limit;
  }

  private take(bytes: number): true {
    this.inflight += bytes;
    return true;
  }

  private wait(queue: Waiter[], bytes: number): Promise<boolean> {
    return new Promise((resolve) => {
      const waiter: Waiter = {
        bytes,
        resolve,
        timer: setTimeout(() => {
          queue.splice(queue.indexOf(waiter), 1);
          resolve(false);
          // The one that gave up may have blocked smaller ones behind it.
          this.wake();
        }, this.waitMs),
      };
      queue.push(waiter);
    });
  }

  /** Grants waiting requests in order while they fit; one that does not fit keeps its place. */
  private wake(): void {
    for (const queue of [this.growing, this.admitting]) {
      while (queue.length > 0 && this.fits(queue[0]!.bytes)) {
        const waiter = queue.shift()!;
        clearTimeout(waiter.timer);
        this.take(waiter.bytes);
        waiter.resolve(true);
      }
      if (queue.length > 0) return;
    }
  }
}

/**
 * One body's share of the budget. Room taken in advance (the declared length of a form or
 * JSON body) is spent by the chunks that arrive; beyond it each chunk asks for its own.
 */
export class BodyCharge {
  private held = 0;
  private credit = 0;
  /** Released: room granted after this (a wait that ended after the request did) goes straight back. */
  private closed = false;

  constructor(private readonly budget: BodyBudget) {}

  /** Room for the start of the body (false after the wait: refused). */
  admit(bytes: number): true | Promise<boolean> {
    const granted = this.budget.admit(bytes);
    const record = (ok: boolean) => {
      if (!ok) return false;
      if (this.closed) return (this.budget.give(bytes), false);
      this.held += bytes;
      this.credit += bytes;
      return true;
    };
    return granted === true ? record(true) || Promise.resolve(false) : granted.then(record);
  }

  /** A chunk arrived: charged against the room taken in advance, else against the budget. */
  arrived(bytes: number): true | Promise<boolean> {
    const fromCredit = Math.min(bytes, this.credit);
    this.credit -= fromCredit;
    const more = bytes - fromCredit;
    if (more === 0) return true;
    const granted = this.budget.grow(more);
    const record = (ok: boolean) => {
      if (!ok) return false;
      if (this.closed) return (this.budget.give(more), false);
      this.held += more;
      return true;
    };
    return granted === true ? record(true) || Promise.resolve(false) : granted.then(record);
  }

  /** Bytes that left memory (written to a temporary file, or dropped). */
  left(bytes: number): void {
    const given = Math.min(bytes, this.held);
    this.held -= given;
    this.budget.give(given);
  }

  /** The body is read: room taken in advance and not used goes back. */
  settle(): void {
    const unused = Math.min(this.credit, this.held);
    this.credit = 0;
    this.left(unused);
  }

  /** Everything goes back (the request's uploads were released, or the body was refused). */
  release(): void {
    this.closed = true;
    this.credit = 0;
    this.left(this.held);
  }
}

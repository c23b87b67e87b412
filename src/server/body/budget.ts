// --max-inflight-body-size: the bytes of request bodies one process holds in memory at once,
// summed over its requests (docs/behaviour.md, "Request bodies and uploads"). A body is charged
// what has arrived, chunk by chunk, never what its headers declare: a client that sends headers
// and no body holds nothing. The bytes of an upload that go to a temporary file, or of a file no
// task reads, are given back as soon as they are written or dropped; what stays (parameters,
// small uploads) is given back when the request's uploads are released (upload.ts), or at once
// when the request ends without its body (chunks.ts). One client address holds at most its
// share of the budget, so a client that stalls many bodies cannot starve the others. A chunk that
// does not fit waits briefly for others to finish, then its body is refused with a 503.

/** How long a body waits for room before it is refused. */
export const BODY_WAIT_MS = 2000;
/** Retry-After of that 503, in seconds. */
export const BODY_RETRY_AFTER_S = 2;
/** One client address holds at most this part of the budget (at least one body of the largest size). */
export const CLIENT_SHARE_DIVISOR = 4;

/** The bytes one client address may hold: a quarter of the budget, at least the largest body, at most the budget. */
export function defaultClientLimit(limit: number, maxBodyBytes: number): number {
  return Math.min(limit, Math.max(Math.floor(limit / CLIENT_SHARE_DIVISOR), maxBodyBytes));
}

/** What one client address holds now, shared by its bodies in flight. */
export interface ClientShare {
  readonly address: string;
  held: number;
  /** Charges of this address not yet released: the share is forgotten when none is left. */
  charges: number;
}

interface Waiter {
  readonly bytes: number;
  readonly share: ClientShare;
  readonly owner: object;
  readonly resolve: (granted: boolean) => void;
  readonly timer: NodeJS.Timeout;
}

/** Which queue, if any, has a waiter at its head that the budget itself has no room for. */
type Stall = 'none' | 'growing' | 'admitting';

export class BodyBudget {
  private inflight = 0;
  private refused = 0;
  /** Bodies already being read that need more: served before new bodies. */
  private readonly growing: Waiter[] = [];
  /** New bodies, first come first served. */
  private readonly admitting: Waiter[] = [];
  private stall: Stall = 'none';
  private readonly shares = new Map<string, ClientShare>();

  constructor(
    readonly limit: number,
    /** The bytes one client address may hold. */
    readonly clientLimit: number = limit,
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

  /** The share of `address`, for a new body of it (give it back with `leave`). */
  join(address: string): ClientShare {
    let share = this.shares.get(address);
    if (share === undefined) {
      share = { address, held: 0, charges: 0 };
      this.shares.set(address, share);
    }
    share.charges++;
    return share;
  }

  /** A body of the share is done (its bytes given back): the share is forgotten with its last body. */
  leave(share: ClientShare): void {
    if (--share.charges === 0 && share.held === 0 && this.shares.get(share.address) === share) this.shares.delete(share.address);
  }

  /** Room for the first bytes of a new body: at once when it fits and nobody waits ahead, else after a wait (false: no room came). */
  admit(share: ClientShare, bytes: number, owner: object): true | Promise<boolean> {
    if (this.stall === 'none' && this.fits(share, bytes)) return this.take(share, bytes);
    return this.wait(this.admitting, share, bytes, owner);
  }

  /** More room for a body being read. */
  grow(share: ClientShare, bytes: number, owner: object): true | Promise<boolean> {
    if (this.stall !== 'growing' && this.fits(share, bytes)) return this.take(share, bytes);
    return this.wait(this.growing, share, bytes, owner);
  }

  give(share: ClientShare, bytes: number): void {
    if (bytes <= 0) return;
    this.inflight -= bytes;
    share.held -= bytes;
    this.wake();
  }

  /** Ends the waits of `owner` (its request ended): they resolve false. */
  cancel(owner: object): void {
    if (this.growing.length === 0 && this.admitting.length === 0) return;
    const found = cancelIn(this.growing, owner) + cancelIn(this.admitting, owner);
    // The one that left may have blocked others behind it.
    if (found > 0) this.wake();
  }

  /** Counts a body refused for want of room (the caller answers it). */
  countRefusal(): void {
    this.refused++;
  }

  private fits(share: ClientShare, bytes: number): boolean {
    return this.inflight + bytes <= this.limit && share.held + bytes <= this.clientLimit;
  }

  private take(share: ClientShare, bytes: number): true {
    this.inflight += bytes;
    share.held += bytes;
    return true;
  }

  private wait(queue: Waiter[], share: ClientShare, bytes: number, owner: object): Promise<boolean> {
    const granted = new Promise<boolean>((resolve) => {
      const waiter: Waiter = {
        bytes,
        share,
        owner,
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
    // Finds where the queues stall now that this one waits (it may wait for its address alone).
    this.wake();
    return granted;
  }

  /**
   * Grants waiting requests in order while the budget has room. One the budget has no room for
   * keeps its place and everyone behind it waits (a small body does not pass a large one); one
   * that only its own address's share holds back is passed, so one client does not hold up the
   * others.
   */
  private wake(): void {
    this.stall = 'none';
    if (!this.grant(this.growing)) this.stall = 'growing';
    else if (!this.grant(this.admitting)) this.stall = 'admitting';
  }

  /** Grants the waiters of one queue in order; false when one is stopped by the budget itself. */
  private grant(queue: Waiter[]): boolean {
    for (let i = 0; i < queue.length;) {
      const waiter = queue[i]!;
      if (this.inflight + waiter.bytes > this.limit) return false;
      if (waiter.share.held + waiter.bytes > this.clientLimit) {
        i++;
        continue;
      }
      queue.splice(i, 1);
      clearTimeout(waiter.timer);
      this.take(waiter.share, waiter.bytes);
      waiter.resolve(true);
    }
    return true;
  }
}

/** Removes the waiters of `owner` from `queue`, answering them false; how many there were. */
function cancelIn(queue: Waiter[], owner: object): number {
  let found = 0;
  for (let i = queue.length - 1; i >= 0; i--) {
    const waiter = queue[i]!;
    if (waiter.owner !== owner) continue;
    queue.splice(i, 1);
    clearTimeout(waiter.timer);
    waiter.resolve(false);
    found++;
  }
  return found;
}

/**
 * One body's share of the budget: charged chunk by chunk as the body arrives (its first chunk
 * as a new body, in the order bodies came), given back as bytes leave memory, the rest on release.
 */
export class BodyCharge {
  private held = 0;
  private started = false;
  /** Released: room granted after this (a wait that ended after the request did) goes straight back. */
  private closed = false;
  private readonly share: ClientShare;

  constructor(
    private readonly budget: BodyBudget,
    address: string,
  ) {
    this.share = budget.join(address);
  }

  /** A chunk arrived: room for it, at once or after a wait (false: refused). */
  arrived(bytes: number): true | Promise<boolean> {
    if (bytes === 0) return true;
    const first = !this.started;
    this.started = true;
    const granted = first ? this.budget.admit(this.share, bytes, this) : this.budget.grow(this.share, bytes, this);
    if (granted === true) {
      this.held += bytes;
      return true;
    }
    return granted.then((ok) => {
      if (!ok) return false;
      if (this.closed) return (this.budget.give(this.share, bytes), false);
      this.held += bytes;
      return true;
    });
  }

  /** Bytes that left memory (written to a temporary file, or dropped). */
  left(bytes: number): void {
    const given = Math.min(bytes, this.held);
    this.held -= given;
    this.budget.give(this.share, given);
  }

  /** Everything goes back (the request's uploads were released, or the body was refused or abandoned); once. */
  release(): void {
    if (this.closed) return;
    this.closed = true;
    this.budget.cancel(this);
    this.left(this.held);
    this.budget.leave(this.share);
  }
}

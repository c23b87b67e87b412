// The budget for request bodies in memory (src/server/body/budget.ts) on its own: who gets room
// and in which order, what a wait that runs out answers, what one client address may hold, and
// what one body's charge gives back. Orders and amounts only; the wait is made short so a
// refusal comes quickly, never timed.
import { describe, expect, it } from 'vitest';
import { BodyBudget, BodyCharge, defaultClientLimit } from '../../src/server/body/budget.js';

const SHORT_WAIT_MS = 30;
const OWNER = {};

describe('BodyBudget', () => {
  it('grants at once what fits, and counts it in flight until given back', () => {
    const budget = new BodyBudget(100, 100, SHORT_WAIT_MS);
    const a = budget.join('a');
    expect(budget.admit(a, 60, OWNER)).toBe(true);
    expect(budget.grow(a, 40, OWNER)).toBe(true);
    expect(budget.bytesInFlight).toBe(100);
    budget.give(a, 70);
    expect(budget.bytesInFlight).toBe(30);
  });

  it('makes what does not fit wait, and grants it when room is given back', async () => {
    const budget = new BodyBudget(100, 100, 60_000);
    const a = budget.join('a');
    expect(budget.admit(a, 80, OWNER)).toBe(true);
    const waiting = budget.admit(a, 50, OWNER);
    expect(waiting).toBeInstanceOf(Promise);
    budget.give(a, 80);
    expect(await waiting).toBe(true);
    expect(budget.bytesInFlight).toBe(50);
  });

  it('refuses a body whose wait runs out, and lets the next one through', async () => {
    const budget = new BodyBudget(100, 100, SHORT_WAIT_MS);
    const a = budget.join('a');
    expect(budget.admit(a, 100, OWNER)).toBe(true);
    expect(await budget.admit(a, 1, OWNER)).toBe(false);
    expect(budget.bytesInFlight).toBe(100);
    budget.give(a, 100);
    expect(budget.admit(a, 1, OWNER)).toBe(true);
  });

  it('serves new bodies first come, first served: a small one does not pass a large one', async () => {
    const budget = new BodyBudget(100, 100, 60_000);
    const a = budget.join('a');
    expect(budget.admit(a, 90, OWNER)).toBe(true);
    const order: string[] = [];
    const large = (budget.admit(a, 60, OWNER) as Promise<boolean>).then((ok) => order.push(`large ${ok}`));
    const small = budget.admit(a, 5, OWNER);
    // Room for the small one, but the large one came first.
    expect(small).toBeInstanceOf(Promise);
    void (small as Promise<boolean>).then((ok) => order.push(`small ${ok}`));
    budget.give(a, 20);
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual([]);
    budget.give(a, 70);
    await Promise.all([large, small]);
    expect(order).toEqual(['large true', 'small true']);
    expect(budget.bytesInFlight).toBe(65);
  });

  it('gives room to bodies already being read before new ones', async () => {
    const budget = new BodyBudget(100, 100, 60_000);
    const a = budget.join('a');
    expect(budget.admit(a, 100, OWNER)).toBe(true);
    const order: string[] = [];
    const fresh = (budget.admit(a, 30, OWNER) as Promise<boolean>).then(() => order.push('new body'));
    const more = (budget.grow(a, 30, OWNER) as Promise<boolean>).then(() => order.push('body being read'));
    budget.give(a, 30);
    await more;
    expect(order).toEqual(['body being read']);
    budget.give(a, 30);
    await fresh;
    expect(order).toEqual(['body being read', 'new body']);
  });

  it('holds one address to its share, and lets other addresses pass the one waiting for it', async () => {
    const budget = new BodyBudget(100, 40, 60_000);
    const a = budget.join('a');
    const b = budget.join('b');
    expect(budget.admit(a, 40, OWNER)).toBe(true);
    // Room in the budget, none in a's share: a waits, b does not wait behind it.
    const overShare = budget.admit(a, 10, OWNER);
    expect(overShare).toBeInstanceOf(Promise);
    expect(budget.admit(b, 40, OWNER)).toBe(true);
    expect(budget.grow(b, 1, OWNER)).toBeInstanceOf(Promise);
    budget.give(a, 10);
    expect(await overShare).toBe(true);
    expect(budget.bytesInFlight).toBe(80);
  });

  it('ends the waits of an owner whose request ended, and lets the next one through', async () => {
    const budget = new BodyBudget(100, 100, 60_000);
    const a = budget.join('a');
    const gone = {};
    expect(budget.admit(a, 90, OWNER)).toBe(true);
    const large = budget.admit(a, 60, gone);
    const small = budget.admit(a, 5, OWNER);
    budget.cancel(gone);
    expect(await large).toBe(false);
    expect(await small).toBe(true);
    expect(budget.waiting).toBe(0);
  });

  it('gives an address a quarter of the budget, at least the largest body, at most the budget', () => {
    expect(defaultClientLimit(256, 10)).toBe(64);
    expect(defaultClientLimit(256, 100)).toBe(100);
    expect(defaultClientLimit(256, 256)).toBe(256);
  });

  it('counts refusals', () => {
    const budget = new BodyBudget(100);
    budget.countRefusal();
    budget.countRefusal();
    expect(budget.refusals).toBe(2);
  });
});

describe('BodyCharge', () => {
  it('charges each chunk as it arrives, nothing before', () => {
    const budget = new BodyBudget(1000, 1000, SHORT_WAIT_MS);
    const charge = new BodyCharge(budget, 'a');
    expect(budget.bytesInFlight).toBe(0);
    expect(charge.arrived(60)).toBe(true);
    expect(budget.bytesInFlight).toBe(60);
    expect(charge.arrived(60)).toBe(true);
    expect(budget.bytesInFlight).toBe(120);
  });

  it('gives back what left memory, and the rest on release, once', () => {
    const budget = new BodyBudget(1000, 1000, SHORT_WAIT_MS);
    const charge = new BodyCharge(budget, 'a');
    expect(charge.arrived(300)).toBe(true);
    charge.left(250); // written to a temporary file
    expect(budget.bytesInFlight).toBe(50);
    charge.release();
    expect(budget.bytesInFlight).toBe(0);
    // Nothing is given back twice.
    charge.release();
    charge.left(10);
    expect(budget.bytesInFlight).toBe(0);
  });

  it('counts the bodies of one address together against its share', async () => {
    const budget = new BodyBudget(1000, 100, SHORT_WAIT_MS);
    const first = new BodyCharge(budget, 'a');
    const second = new BodyCharge(budget, 'a');
    const other = new BodyCharge(budget, 'b');
    expect(first.arrived(80)).toBe(true);
    expect(await second.arrived(30)).toBe(false);
    expect(other.arrived(80)).toBe(true);
    first.release();
    second.release();
    expect(new BodyCharge(budget, 'a').arrived(100)).toBe(true);
  });

  it('ends its wait when released, and hands straight back nothing', async () => {
    const budget = new BodyBudget(100, 100, 60_000);
    const other = new BodyCharge(budget, 'b');
    expect(other.arrived(100)).toBe(true);
    const charge = new BodyCharge(budget, 'a');
    const waiting = charge.arrived(50);
    charge.release();
    expect(await waiting).toBe(false);
    expect(budget.waiting).toBe(0);
    other.release();
    expect(budget.bytesInFlight).toBe(0);
  });
});

// The budget for request bodies in memory (src/server/body-budget.ts) on its own: who gets room
// and in which order, what a wait that runs out answers, and what one body's charge gives back.
// Orders and amounts only; the wait is made short so a refusal comes quickly, never timed.
import { describe, expect, it } from 'vitest';
import { BodyBudget, BodyCharge } from '../../src/server/body-budget.js';

const SHORT_WAIT_MS = 30;

describe('BodyBudget', () => {
  it('grants at once what fits, and counts it in flight until given back', () => {
    const budget = new BodyBudget(100, SHORT_WAIT_MS);
    expect(budget.admit(60)).toBe(true);
    expect(budget.grow(40)).toBe(true);
    expect(budget.bytesInFlight).toBe(100);
    budget.give(70);
    expect(budget.bytesInFlight).toBe(30);
  });

  it('makes what does not fit wait, and grants it when room is given back', async () => {
    const budget = new BodyBudget(100, 60_000);
    expect(budget.admit(80)).toBe(true);
    const waiting = budget.admit(50);
    expect(waiting).toBeInstanceOf(Promise);
    budget.give(80);
    expect(await waiting).toBe(true);
    expect(budget.bytesInFlight).toBe(50);
  });

  it('refuses a body whose wait runs out, and lets the next one through', async () => {
    const budget = new BodyBudget(100, SHORT_WAIT_MS);
    expect(budget.admit(100)).toBe(true);
    expect(await budget.admit(1)).toBe(false);
    expect(budget.bytesInFlight).toBe(100);
    budget.give(100);
    expect(budget.admit(1)).toBe(true);
  });

  it('serves new bodies first come, first served: a small one does not pass a large one', async () => {
    const budget = new BodyBudget(100, 60_000);
    expect(budget.admit(90)).toBe(true);
    const order: string[] = [];
    const large = (budget.admit(60) as Promise<boolean>).then((ok) => order.push(`large ${ok}`));
    const small = budget.admit(5);
    // Room for the small one, but the large one came first.
    expect(small).toBeInstanceOf(Promise);
    void (small as Promise<boolean>).then((ok) => order.push(`small ${ok}`));
    budget.give(20);
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual([]);
    budget.give(70);
    await Promise.all([large, small]);
    expect(order).toEqual(['large true', 'small true']);
    expect(budget.bytesInFlight).toBe(65);
  });

  it('gives room to bodies already being read before new ones', async () => {
    const budget = new BodyBudget(100, 60_000);
    expect(budget.admit(100)).toBe(true);
    const order: string[] = [];
    const fresh = (budget.admit(30) as Promise<boolean>).then(() => order.push('new body'));
    const more = (budget.grow(30) as Promise<boolean>).then(() => order.push('body being read'));
    budget.give(30);
    await more;
    expect(order).toEqual(['body being read']);
    budget.give(30);
    await fresh;
    expect(order).toEqual(['body being read', 'new body']);
  });

  it('counts refusals', () => {
    const budget = new BodyBudget(100);
    budget.countRefusal();
    budget.countRefusal();
    expect(budget.refusals).toBe(2);
  });
});

describe('BodyCharge', () => {
  it('spends room taken in advance before asking for more', () => {
    const budget = new BodyBudget(1000, SHORT_WAIT_MS);
    const charge = new BodyCharge(budget);
    expect(charge.admit(100)).toBe(true);
    expect(charge.arrived(60)).toBe(true);
    expect(budget.bytesInFlight).toBe(100);
    expect(charge.arrived(60)).toBe(true);
    expect(budget.bytesInFlight).toBe(120);
  });

  it('gives back what left memory, what was not used, and the rest on release', () => {
    const budget = new BodyBudget(1000, SHORT_WAIT_MS);
    const charge = new BodyCharge(budget);
    charge.admit(100);
    charge.arrived(300); // 100 from the advance, 200 more
    charge.left(250); // written to a temporary file
    expect(budget.bytesInFlight).toBe(50);
    charge.settle();
    expect(budget.bytesInFlight).toBe(50);
    charge.release();
    expect(budget.bytesInFlight).toBe(0);
    // Nothing is given back twice.
    charge.release();
    charge.left(10);
    expect(budget.bytesInFlight).toBe(0);
  });

  it('gives back room taken in advance that the body did not use', () => {
    const budget = new BodyBudget(1000, SHORT_WAIT_MS);
    const charge = new BodyCharge(budget);
    charge.admit(100);
    charge.arrived(30);
    charge.settle();
    expect(budget.bytesInFlight).toBe(30);
  });

  it('hands straight back room granted after the body was released', async () => {
    const budget = new BodyBudget(100, 60_000);
    const other = new BodyCharge(budget);
    other.admit(100);
    const charge = new BodyCharge(budget);
    const waiting = charge.admit(50);
    charge.release();
    other.release();
    expect(await waiting).toBe(false);
    expect(budget.bytesInFlight).toBe(0);
  });
});

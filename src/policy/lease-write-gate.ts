// How many calls the address Leases have in flight to the API server at once. Requests (a pod
// create waiting for its Lease) go before background work (releases, sweeps), may wait only
// while their own deadline lasts, and only so many may wait: a flood of reviews meets a quick
// "unavailable" instead of a queue that grows with it.

export type GatePriority = 'request' | 'background';

/** Why a call did not start: the queue was full, or its deadline passed while it waited. */
export class GateRefused extends Error {}

export interface LeaseWriteGateLimits {
  /** Calls in flight, all priorities. */
  inFlight: number;
  /** Of those, background calls (releases, sweeps) at most: requests always find room. */
  background: number;
  /** Background calls that may run even while requests wait, so a flood cannot stop the sweep (default 2). */
  backgroundGuaranteed?: number;
  /** Requests waiting for a slot; more are refused at once. */
  waiting: number;
}

type Waiter = () => void;

export class LeaseWriteGate {
  private running = 0;
  private runningBackground = 0;
  private peak = 0;
  private readonly requests: Waiter[] = [];
  private readonly background: Waiter[] = [];

  constructor(readonly limits: LeaseWriteGateLimits) {}

  /** Runs `call` when a slot is free; rejects with GateRefused when it cannot start in time. */
  async run<T>(priority: GatePriority, signal: AbortSignal, call: () => Promise<T>): Promise<T> {
    signal.throwIfAborted();
    if (this.mayStart(priority)) this.take(priority);
    else await this.wait(priority, signal); // the slot is taken for us when we are woken
    try {
      return await call();
    } finally {
      this.running--;
      if (priority === 'background') this.runningBackground--;
      this.next();
    }
  }

  stats(): { inFlight: number; waiting: number; peak: number } {
    return { inFlight: this.running, waiting: this.requests.length + this.background.length, peak: this.peak };
  }

  private take(priority: GatePriority): void {
    this.running++;
    if (priority === 'background') this.runningBackground++;
    this.peak = Math.max(this.peak, this.running);
  }

  private mayStart(priority: GatePriority): boolean {
    if (this.running >= this.limits.inFlight) return false;
    if (priority === 'request') return true;
    return (
      this.runningBackground <
      (this.requests.length === 0 ? this.limits.background : Math.min(this.limits.background, this.limits.backgroundGuaranteed ?? 2))
    );
  }

  private wait(priority: GatePriority, signal: AbortSignal): Promise<void> {
    const queue = priority === 'request' ? this.requests : this.background;
    if (priority === 'request' && queue.length >= this.limits.waiting) {
      return Promise.reject(new GateRefused(`${this.limits.inFlight} claim calls in flight and ${queue.length} waiting (the bounds)`));
    }
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        const i = queue.indexOf(waiter);
        if (i >= 0) queue.splice(i, 1);
        reject(new GateRefused(`no free slot among the ${this.limits.inFlight} claim calls in flight before the deadline`));
      };
      const waiter: Waiter = () => {
        signal.removeEventListener('abort', onAbort);
        this.take(priority);
        resolve();
      };
      signal.addEventListener('abort', onAbort, { once: true });
      queue.push(waiter);
    });
  }

  private next(): void {
    // The guaranteed background share first (releases and sweeps free room for requests), then requests.
    if (this.background.length > 0 && this.requests.length > 0 && this.mayStart('background')) return this.background.shift()!();
    if (this.requests.length > 0 && this.running < this.limits.inFlight) return this.requests.shift()!();
    if (this.background.length > 0 && this.mayStart('background')) this.background.shift()!();
  }
}

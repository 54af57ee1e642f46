// A gate on the GETs that reviews cause on a cache miss: so many in flight at once, so many
// waiting (each at most its deadline), and an answer at once past that. The API server is shared,
// and a burst of misses should queue here, bounded, rather than there (issue 24 for NADs, issue
// 37 for ResourceClaimTemplates).

export type SlotOutcome = 'ok' | 'full' | 'timeout';

/**
 * A waiter with less than this left is not handed a slot: no API server answers a GET in it, and
 * the in-flight lookups that free slots time out on the same millisecond as the waiters (a CI
 * run sent a 1 ms GET from a waiter 0.4 ms before its deadline).
 */
export const MIN_GET_MS = 10;

interface Waiter {
  /** performance.now() past which the lookup no longer waits. */
  deadline: number;
  settle(outcome: 'ok' | 'timeout'): void;
}

export class RequestSlots {
  private running = 0;
  /** Waiting lookups, in arrival order: each is woken with a slot, or told its wait ran out. */
  private readonly waiting = new Set<Waiter>();

  constructor(
    readonly maxInFlight: number,
    readonly maxWaiting: number,
    readonly minLeftMs: number = MIN_GET_MS,
  ) {}

  /** A slot at once, after waiting at most `waitMs`, or none (`full`, `timeout`). Release an `ok`. */
  acquire(waitMs: number): Promise<SlotOutcome> | SlotOutcome {
    if (this.running < this.maxInFlight) {
      this.running++;
      return 'ok';
    }
    if (this.waiting.size >= this.maxWaiting) return 'full';
    return new Promise((resolve) => {
      const waiter: Waiter = {
        deadline: performance.now() + waitMs,
        settle: (outcome) => {
          clearTimeout(timer);
          resolve(outcome);
        },
      };
      const timer = setTimeout(() => {
        this.waiting.delete(waiter);
        resolve('timeout');
      }, waitMs);
      this.waiting.add(waiter);
    });
  }

  /**
   * Hands the slot to the longest waiting lookup whose wait has not run out. One whose deadline
   * passed while its timer has not fired yet (a busy event loop runs the expired timers one after
   * another, and a slot freed by the first may reach a later one) is told `timeout`: nobody
   * awaits the answer of a GET it would send. So is one with less than `minLeftMs` left.
   */
  release(): void {
    const now = performance.now();
    for (const waiter of this.waiting) {
      this.waiting.delete(waiter);
      if (waiter.deadline - now < this.minLeftMs) {
        waiter.settle('timeout');
        continue;
      }
      waiter.settle('ok');
      return;
    }
    this.running--;
  }

  /** Running and waiting now (metrics, tests). */
  load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.size };
  }
}

// A gate on the GETs that reviews cause on a cache miss: so many in flight at once, so many
// waiting (each at most its deadline), and an answer at once past that. The API server is shared,
// and a burst of misses should queue here, bounded, rather than there (issue 24 for NADs, issue
// 37 for ResourceClaimTemplates).

export type SlotOutcome = 'ok' | 'full' | 'timeout';

export class RequestSlots {
  private running = 0;
  /** Waiting lookups, in arrival order. */
  private readonly waiting = new Set<() => void>();

  constructor(
    readonly maxInFlight: number,
    readonly maxWaiting: number,
  ) {}

  /** A slot at once, after waiting at most `waitMs`, or none (`full`, `timeout`). Release an `ok`. */
  acquire(waitMs: number): Promise<SlotOutcome> | SlotOutcome {
    if (this.running < this.maxInFlight) {
      this.running++;
      return 'ok';
    }
    if (this.waiting.size >= this.maxWaiting) return 'full';
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        resolve('ok');
      };
      const timer = setTimeout(() => {
        this.waiting.delete(wake);
        resolve('timeout');
      }, waitMs);
      this.waiting.add(wake);
    });
  }

  /** Hands the slot to the longest waiting lookup, if any. */
  release(): void {
    const next = this.waiting.values().next();
    if (next.done) {
      this.running--;
      return;
    }
    this.waiting.delete(next.value);
    next.value();
  }

  /** Running and waiting now (metrics, tests). */
  load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.size };
  }
}

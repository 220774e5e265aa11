/**
 * A bridge's one-command-at-a-time executor: whatever touches the broker (a delivered command, the stop-out's watch
 * and its closes) runs through `run`, one after the other in the order asked, never interleaved across awaits.
 */
export class Serial {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(work: () => T | Promise<T>): Promise<T> {
    const next = this.tail.then(work, work);
    // The chain goes on whatever this one came to; its caller sees the failure.
    this.tail = next.catch(() => undefined);
    return next;
  }
}

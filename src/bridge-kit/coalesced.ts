/**
 * Work that runs one at a time: asked again while it runs, it runs once more afterwards (however often it was asked),
 * and every asker waits for the run that covers its ask. A read-back after a new session, a look at the broker.
 */
export function coalesced(work: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  let again = false;
  return () => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      try {
        do {
          again = false;
          await work();
        } while (again);
      } finally {
        running = undefined;
      }
    })();
    return running;
  };
}

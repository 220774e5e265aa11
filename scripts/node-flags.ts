/**
 * The Node.js flags each of our programs runs with, listed once: `npm run ingress` (package.json), the Dockerfile,
 * docker-compose.yml, the tests' and the bench's process helpers (support/processes.ts) all start the ingress with
 * exactly these; test/unit/node-flags.test.ts fails if one of them drifts. CHANGELOG.md ("Performance") has the measurements.
 */
export interface NodeFlag {
  flag: string;
  why: string;
}

export const NODE_FLAGS = {
  ingress: [
    {
      flag: '--max-old-space-size=512',
      why:
        'V8 sizes its old generation by how far it is from the limit, so the default limit (a quarter of the machine) ' +
        'lets the ingress grow to 225 MB under 40 signals/s with a live set under 100 MB; a limit below what a burst ' +
        'commits is worse: under Node 24, at 160 MB, the heap committed 168 MB for 33 MB live after 1,000 accounts ' +
        'said hello, and the collector then ran every 25 ms for good (1.8 cores idle); at 512 MB, 0.04 cores',
    },
  ],
} as const satisfies Record<string, readonly NodeFlag[]>;

export function nodeFlags(program: string): string[] {
  const flags: readonly NodeFlag[] = (NODE_FLAGS as Record<string, readonly NodeFlag[]>)[program] ?? [];
  return flags.map((f) => f.flag);
}

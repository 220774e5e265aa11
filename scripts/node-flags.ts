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
      flag: '--max-old-space-size=160',
      why:
        'V8 sizes its old generation by how far it is from the limit: with the default limit (a quarter of the ' +
        'machine) the ingress grew to 225 MB under 40 signals/s with a live set under 100 MB; with 160 MB its peak ' +
        'was 144 MB at the same CPU',
    },
  ],
} as const satisfies Record<string, readonly NodeFlag[]>;

export function nodeFlags(program: string): string[] {
  const flags: readonly NodeFlag[] = (NODE_FLAGS as Record<string, readonly NodeFlag[]>)[program] ?? [];
  return flags.map((f) => f.flag);
}

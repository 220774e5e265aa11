import fs from 'node:fs';
import path from 'node:path';
import type { z } from 'zod';
import { envSchema } from '../../src/config';
import { connectorSchema } from '../../src/ctrader/config';

/**
 * docs/configuration.md is the operator's one list of settings. A variable a schema reads but the doc lacks is a
 * setting nobody can find; a variable the doc lists but no code reads is a setting that silently does nothing. Both
 * fail here, so a branch that adds (or drops) a variable fails until the doc says so.
 */
const REPO = path.resolve(__dirname, '..', '..');
const DOC = 'docs/configuration.md';

type Schema = z.ZodObject<z.ZodRawShape>;

/** Each program's settings live in one section (a `## ` heading) of the doc: its schema, or the file that reads them. */
const SECTIONS: { heading: string; schema?: Schema; readBy?: string }[] = [
  { heading: 'The service (ingress and worker)', schema: envSchema as unknown as Schema },
  { heading: 'The cTrader connector', schema: connectorSchema as unknown as Schema },
  // These programs read a few variables without a schema; the file named must read each one the doc lists.
  { heading: '`make start`', readBy: 'scripts/start.sh' },
  { heading: 'The paper bridge', readBy: 'src/paper/main.ts' },
  { heading: 'The MCP server', readBy: 'src/mcp/tools.ts' },
];

interface Row {
  line: number;
  names: string[];
  defaultCell: string;
}

/** The table rows of each `## ` section: the variables in the row's first cell, and its second cell. */
function sectionsOf(markdown: string): Map<string, Row[]> {
  const sections = new Map<string, Row[]>();
  let current: Row[] | undefined;
  markdown.split('\n').forEach((text, i) => {
    const heading = /^## (.+)$/.exec(text);
    if (heading) {
      current = [];
      sections.set(heading[1]!.trim(), current);
      return;
    }
    if (!current || !text.startsWith('|') || /^\|[\s|:-]+\|$/.test(text)) return;
    const cells = text.split('|').slice(1, -1);
    const names = [...(cells[0] ?? '').matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1]!);
    if (names.length > 0) current.push({ line: i + 1, names, defaultCell: cells[1] ?? '' });
  });
  return sections;
}

const sections = sectionsOf(fs.readFileSync(path.join(REPO, DOC), 'utf8'));
const rowsOf = (heading: string): Row[] => sections.get(heading) ?? [];
const documented = (heading: string) => new Set(rowsOf(heading).flatMap((r) => r.names));

/** What the schema gives for an unset variable, when it is a plain value an operator would write. */
function defaultOf(schema: Schema, key: string): string | undefined {
  const parsed = (schema.shape[key] as z.ZodType).safeParse(undefined);
  if (!parsed.success) return undefined;
  return typeof parsed.data === 'string' || typeof parsed.data === 'number' ? String(parsed.data) : undefined;
}

describe(`${DOC}: every setting the code reads, and nothing else`, () => {
  test.each(SECTIONS.map((s) => [s.heading] as const))('the doc has a section "## %s"', (heading) => {
    expect(sections.has(heading)).toBe(true);
  });

  test.each(SECTIONS.map((s) => [s.heading] as const))('each row of "## %s" names one variable', (heading) => {
    const crowded = rowsOf(heading)
      .filter((r) => r.names.length !== 1)
      .map((r) => `line ${r.line}: ${r.names.join(', ')}`);
    expect(crowded).toEqual([]);
  });

  test.each(SECTIONS.filter((s) => s.schema).map((s) => [s.heading, s.schema!] as const))(
    'every variable the schema of "## %s" reads is documented there',
    (heading, schema) => {
      const undocumented = Object.keys(schema.shape).filter((key) => !documented(heading).has(key));
      expect(undocumented).toEqual([]);
    },
  );

  test.each(SECTIONS.filter((s) => s.schema).map((s) => [s.heading, s.schema!] as const))(
    'every variable documented in "## %s" is read by its schema (none stale)',
    (heading, schema) => {
      const stale = [...documented(heading)].filter((name) => !(name in schema.shape));
      expect(stale).toEqual([]);
    },
  );

  test.each(SECTIONS.filter((s) => s.schema).map((s) => [s.heading, s.schema!] as const))(
    'the default documented in "## %s" is the one the schema gives',
    (heading, schema) => {
      const wrong = rowsOf(heading)
        .filter((r) => r.names.length === 1 && r.names[0]! in schema.shape)
        .flatMap((r) => {
          const expected = defaultOf(schema, r.names[0]!);
          return expected === undefined || r.defaultCell.includes(`\`${expected}\``)
            ? []
            : [`${r.names[0]!}: \`${expected}\`, doc says ${r.defaultCell.trim()}`];
        });
      expect(wrong).toEqual([]);
    },
  );

  test.each(SECTIONS.filter((s) => s.readBy).map((s) => [s.heading, s.readBy!] as const))(
    'every variable documented in "## %s" is read by %s (none stale)',
    (heading, file) => {
      const source = fs.readFileSync(path.join(REPO, file), 'utf8');
      const stale = [...documented(heading)].filter((name) => !new RegExp(`\\b${name}\\b`).test(source));
      expect(stale).toEqual([]);
    },
  );

  test.each(SECTIONS.filter((s) => s.readBy?.endsWith('.ts')).map((s) => [s.readBy!, s.heading] as const))(
    'every variable %s reads from its environment is documented in "## %s"',
    (file, heading) => {
      const source = fs.readFileSync(path.join(REPO, file), 'utf8');
      const read = [...new Set([...source.matchAll(/\benv\.([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]!))];
      expect(read.filter((name) => !documented(heading).has(name))).toEqual([]);
    },
  );
});

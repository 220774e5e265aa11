/**
 * The docs' tables that restate a list kept in the code, rendered from that list: the action table
 * (docs/actions.md), the bridge versions per action (docs/capabilities.md), the reason codes
 * (docs/reason-codes.md) and the bridge versions this code ships (README.md). test/unit/doc-tables.test.ts fails when a doc drifts; `node dist/scripts/doc-tables.js
 * --write` rewrites the tables in place (the text around them is left alone).
 */
import fs from 'node:fs';
import path from 'node:path';
import { ACTION_TABLE, ACTIONS, type Action, type ActionDescription } from '../src/domain/actions';
import { CAPABILITIES, CURRENT_BRIDGE_VERSION } from '../src/domain/capabilities';
import { REASON_CODES } from '../src/domain/reason-codes';

export interface DocTable {
  file: string;
  /** The table's header line: the table runs from it to the next blank line. */
  header: string;
  render(): string;
}

const table = (header: string, rows: string[]) => [header, header.replace(/[^|]+/g, '---'), ...rows].join('\n');

function fieldsOf(d: ActionDescription): string {
  if (d.fieldsNote) return d.fieldsNote;
  const { required, optional, oneOf } = d.fields;
  const parts = [required.length > 0 ? required.join(', ') : '—'];
  if (oneOf) parts.push(`at least one of ${oneOf.join(', ')}`);
  else if (optional.length > 0) parts.push(`optional ${optional.join(', ')}`);
  return parts.join('; ');
}

const KEY_RULE: Record<ActionDescription['keyRequired'], string> = {
  always: 'required',
  'without positionId': 'required without positionId',
  never: 'optional',
};

export const DOC_TABLES: DocTable[] = [
  {
    file: 'docs/actions.md',
    header: '| action | kind | fields | idempotency key | MT5 EA / cTrader bridge needed | what it does |',
    render: () =>
      table(
        '| action | kind | fields | idempotency key | MT5 EA / cTrader bridge needed | what it does |',
        ACTIONS.map((a: Action) => {
          const d: ActionDescription = ACTION_TABLE[a];
          const needs = d.needs ? `${d.needs.mt5} / ${d.needs.ctrader}` : 'any';
          return `| \`${a}\` | ${d.kind.replace('_', '-')} | ${fieldsOf(d)} | ${KEY_RULE[d.keyRequired]} | ${needs} | ${d.summary} |`;
        }),
      ),
  },
  {
    file: 'docs/capabilities.md',
    header: '| action | MT5 EA | cTrader cBot |',
    render: () => {
      const groups = new Map<string, Action[]>();
      for (const a of ACTIONS) {
        const key = `${CAPABILITIES.mt5.needs[a] ?? ''}|${CAPABILITIES.ctrader.needs[a] ?? ''}`;
        if (key !== '|') groups.set(key, [...(groups.get(key) ?? []), a]);
      }
      return table('| action | MT5 EA | cTrader cBot |', [
        `| every action not listed below | ${CAPABILITIES.mt5.base} | ${CAPABILITIES.ctrader.base} |`,
        ...[...groups.values()].map((as) => `| ${as.join(', ')} | ${CAPABILITIES.mt5.needs[as[0]!]} | ${CAPABILITIES.ctrader.needs[as[0]!]} |`),
      ]);
    },
  },
  {
    file: 'docs/reason-codes.md',
    header: '| code | raised by | meaning |',
    render: () =>
      table(
        '| code | raised by | meaning |',
        Object.entries(REASON_CODES).map(([code, { raisedBy, meaning }]) => `| \`${code}\` | ${raisedBy} | ${meaning} |`),
      ),
  },
  {
    file: 'README.md',
    header: '| bridge | version |',
    render: () =>
      table('| bridge | version |', [
        `| MetaTrader 5 bridge (\`bridges/mt5\`) | ${CURRENT_BRIDGE_VERSION.mt5} |`,
        `| cTrader connector (\`src/ctrader\`) | ${CURRENT_BRIDGE_VERSION.ctrader} |`,
      ]),
  },
];

/** The table as the doc has it now (undefined when the header is missing). */
export function tableInDoc(repo: string, t: DocTable): string | undefined {
  const doc = fs.readFileSync(path.join(repo, t.file), 'utf8');
  const start = doc.indexOf(t.header);
  if (start < 0) return undefined;
  const end = doc.indexOf('\n\n', start);
  return doc.slice(start, end === -1 ? undefined : end).trimEnd();
}

function write(repo: string, t: DocTable): void {
  const file = path.join(repo, t.file);
  const doc = fs.readFileSync(file, 'utf8');
  const start = doc.indexOf(t.header);
  if (start < 0) throw new Error(`${t.file} has no table headed ${t.header}`);
  const end = doc.indexOf('\n\n', start);
  fs.writeFileSync(file, doc.slice(0, start) + t.render() + (end === -1 ? '\n' : doc.slice(end)));
}

if (require.main === module) {
  const repo = path.resolve(__dirname, '..', '..');
  for (const t of DOC_TABLES) {
    if (process.argv.includes('--write')) write(repo, t);
    else process.stdout.write(`${t.file}\n${t.render()}\n\n`);
  }
}

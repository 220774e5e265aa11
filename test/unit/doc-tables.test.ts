import fs from 'node:fs';
import path from 'node:path';
import { REASON_CODES } from '../../src/domain/reason-codes';

/** The docs' tables are rendered from the one list in the code; a doc that drifts from it fails here. */
const REPO = path.resolve(__dirname, '..', '..');

function reasonCodeTable(): string {
  const rows = Object.entries(REASON_CODES).map(([code, { raisedBy, meaning }]) => `| \`${code}\` | ${raisedBy} | ${meaning} |`);
  return ['| code | raised by | meaning |', '|---|---|---|', ...rows].join('\n');
}

describe('docs tables rendered from the code', () => {
  test('docs/reason-codes.md lists every reason code of src/domain/reason-codes.ts, in its order, with its words', () => {
    const doc = fs.readFileSync(path.join(REPO, 'docs', 'reason-codes.md'), 'utf8');
    const start = doc.indexOf('| code | raised by | meaning |');
    expect(start).toBeGreaterThanOrEqual(0);
    const end = doc.indexOf('\n\n', start);
    expect(doc.slice(start, end === -1 ? undefined : end)).toBe(reasonCodeTable());
  });
});

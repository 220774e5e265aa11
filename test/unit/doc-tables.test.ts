import path from 'node:path';
import { DOC_TABLES, tableInDoc } from '../../scripts/doc-tables';

/** The docs' tables restate lists kept in the code; a doc that drifts from its list fails here (scripts/doc-tables.ts). */
const REPO = path.resolve(__dirname, '..', '..');

describe('docs tables rendered from the code', () => {
  test.each(DOC_TABLES.map((t) => [t.file, t] as const))(
    '%s has its table exactly as the code renders it (node dist/scripts/doc-tables.js --write)',
    (_file, t) => {
      expect(tableInDoc(REPO, t)).toBe(t.render());
    },
  );
});

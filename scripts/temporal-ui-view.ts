import { OutcomeKey, ReasonKey } from '../src/temporal/search-attributes';
import { accountWorkflow } from '../workflows/account';

/**
 * The operator's at-a-glance view in the Temporal UI (docs/operating.md, "At a glance in the Temporal UI"): saved
 * views that list what needs a look, and Outcome and Reason as columns of the workflows list, so a rejected account's
 * row says `rejected  broker:10019` without opening it. UI 2.42.1 keeps both in the browser's local storage only
 * (`saved-workflow-queries` and `namespace-workflow-table-columns`, per namespace), not on the server, so we ship them
 * as a bookmarklet each operator runs once per browser; test/integration/temporal-ui.test.ts runs the same function.
 *
 *   node dist/scripts/temporal-ui-view.js [namespace] [ui-url]   prints the bookmarklet and the views' links
 */
export const OPERATOR_VIEWS: readonly OperatorView[] = [
  { name: 'Rejected accounts', query: `WorkflowType="${accountWorkflow.name}" AND ${OutcomeKey.name}="rejected"` },
  { name: 'Accounts waiting for their bridge', query: 'WorkflowType="${accountWorkflow.name}" AND ExecutionStatus="Running"' },
  { name: 'Signals waiting for an operator', query: `${ReasonKey.name}="account_workflow_failed"` },
];
const OPERATOR_COLUMNS: readonly string[] = [OutcomeKey.name, ReasonKey.name];

interface OperatorView {
  name: string;
  query: string;
}

/** The browser's localStorage, as far as we use it (no DOM types in this project). */
export interface BrowserStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

/**
 * Adds the views and columns to what the browser already holds for the namespace, keeping the operator's own: a view
 * of the same name is replaced, a column already shown is left where it is, new columns go right after Status. Runs in
 * the browser (as a bookmarklet, or by the test through playwright), so it uses nothing from outside itself. The
 * UI reads local storage when it loads: reload after.
 */
function installOperatorView(storage: BrowserStorage, namespace: string, views: readonly OperatorView[], columns: readonly string[]): void {
  const read = (key: string): Record<string, unknown[]> => {
    try {
      const parsed: unknown = JSON.parse(storage.getItem(key) ?? '{}');
      return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown[]>) : {};
    } catch {
      return {};
    }
  };
  const queries = read('saved-workflow-queries');
  const names = new Set(views.map((v) => v.name));
  const kept = (Array.isArray(queries[namespace]) ? queries[namespace] : []).filter((q) => !names.has((q as { name?: string }).name ?? ''));
  // The UI 2.42.1 shape of a user's saved view (src/lib/stores/saved-queries.ts); the UI keeps 20 at most.
  queries[namespace] = [...kept, ...views.map((v, i) => ({ id: `external-signals-${i}`, name: v.name, query: v.query, type: 'user' }))].slice(-20);
  storage.setItem('saved-workflow-queries', JSON.stringify(queries));

  const tables = read('namespace-workflow-table-columns');
  // The UI's default columns when the browser holds none (DEFAULT_WORKFLOWS_COLUMNS).
  const defaults = ['Status', 'Workflow ID', 'Run ID', 'Type', 'Start', 'End'].map((label) => ({ label }));
  const current = (Array.isArray(tables[namespace]) && tables[namespace].length > 0 ? tables[namespace] : defaults) as { label: string }[];
  const missing = columns.filter((c) => !current.some((h) => h.label === c)).map((label) => ({ label }));
  const at = current.findIndex((h) => h.label === 'Status') + 1;
  tables[namespace] = [...current.slice(0, at), ...missing, ...current.slice(at)];
  storage.setItem('namespace-workflow-table-columns', JSON.stringify(tables));
}

/**
 * The bookmarklet: installs the view for the namespace, then opens its first saved view. Percent-encoded whole, as a
 * browser decodes a `javascript:` URL before running it: a bookmark keeps no line breaks, and the function has some.
 */
export function operatorViewBookmarklet(namespace: string): string {
  const args = [namespace, OPERATOR_VIEWS, OPERATOR_COLUMNS].map((a) => JSON.stringify(a)).join(',');
  const open = `location.href='/namespaces/'+encodeURIComponent(${JSON.stringify(namespace)})+'/workflows?query='+encodeURIComponent(${JSON.stringify(OPERATOR_VIEWS[0]!.query)})`;
  return `javascript:${encodeURIComponent(`(${installOperatorView.toString()})(localStorage,${args});${open};void 0`)}`;
}

/** The list of one view in the UI at uiUrl: works without the bookmarklet too (the filter, not the columns). */
function viewLink(uiUrl: string, namespace: string, view: OperatorView): string {
  return `${uiUrl.replace(/\/+$/, '')}/namespaces/${encodeURIComponent(namespace)}/workflows?query=${encodeURIComponent(view.query)}`;
}

if (require.main === module) {
  const [namespace = process.env.TEMPORAL_NAMESPACE ?? 'default', uiUrl = `http://127.0.0.1:${process.env.TEMPORAL_UI_PORT ?? '8233'}`] = process.argv.slice(2);
  const links = OPERATOR_VIEWS.map((v) => `  ${v.name}: ${viewLink(uiUrl, namespace, v)}`);
  process.stdout.write(
    `Bookmarklet (make it a bookmark's URL, then click it once per browser on the Temporal UI's page):\n${operatorViewBookmarklet(namespace)}\n\nViews:\n${links.join('\n')}\n`,
  );
}

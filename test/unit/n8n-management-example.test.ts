import fs from 'node:fs';
import path from 'node:path';
import { validateSignal } from '../../src/domain/signal';
import { featuresNeeded } from '../../src/domain/management';

/**
 * The n8n workflow's trade-management example (docs/integrations/n8n/): a Code node, not connected, whose signal the
 * ingress accepts and which shows every management feature, so a user copying it learns each field once.
 */
const WORKFLOW = JSON.parse(fs.readFileSync(path.resolve(__dirname, '..', '..', 'docs', 'integrations', 'n8n', 'external-signals.workflow.json'), 'utf8')) as {
  nodes: { name: string; type: string; parameters: Record<string, unknown> }[];
  connections: Record<string, { main: { node: string }[][] }>;
};
const NAME = 'Signal with trade management (example)';

describe('the n8n trade-management example node', () => {
  const node = WORKFLOW.nodes.find((n) => n.name === NAME);

  test('when the workflow is read, then the example is a Code node that no node runs (it is to copy from)', () => {
    expect(node?.type).toBe('n8n-nodes-base.code');
    const targets = Object.values(WORKFLOW.connections).flatMap((c) => c.main.flat().map((t) => t.node));
    expect(targets).not.toContain(NAME);
    expect(Object.keys(WORKFLOW.connections)).not.toContain(NAME);
  });

  test('when its code runs, then its signal with a secret is accepted and asks for all five management features', () => {
    const run = new Function('$workflow', node!.parameters.jsCode as string);
    const [item] = run({ name: 'External Signals' }) as { json: { signal: Record<string, unknown> } }[];
    const result = validateSignal({ ...item!.json.signal, secret: 'whsec_sample' });
    if (!result.ok) throw new Error(result.error);
    expect(featuresNeeded(result.signal)).toEqual(['trailing_stop', 'breakeven_trigger', 'take_profit_levels', 'close_opposite', 'max_spread']);
  });
});

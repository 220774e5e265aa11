import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';

/** Prebuilds the workflow bundle at build time, so a worker starts in a second instead of bundling on every start. */
export const WORKFLOW_BUNDLE_PATH = path.resolve(__dirname, '..', 'workflow-bundle.js');

async function main(): Promise<void> {
  const { code } = await bundleWorkflowCode({ workflowsPath: require.resolve('../workflows') });
  await writeFile(WORKFLOW_BUNDLE_PATH, code);
  console.log(`workflow bundle: ${WORKFLOW_BUNDLE_PATH} (${(code.length / 1024).toFixed(0)} KiB)`);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}

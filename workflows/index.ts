export { signalWorkflow, outcomesQuery } from './signal';
export { accountWorkflow, bridgeReportSignal, bridgeReportUpdate } from './account';
export { idempotencyWindowWorkflow } from './idempotency';
export { callbackWorkflow } from './callback';

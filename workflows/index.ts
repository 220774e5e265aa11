export { signalWorkflow, outcomesQuery } from './signal';
export { accountWorkflow, bridgeReportSignal } from './account';
export { idempotencyWindowWorkflow } from './idempotency';

export { signalWorkflow } from './signal';
export { accountWorkflow } from './account';
export { idempotencyWindowWorkflow } from './idempotency';
export { callbackWorkflow } from './callback';

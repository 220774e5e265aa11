export { signalWorkflow } from './signal';
export { accountWorkflow } from './account';
export { callbackWorkflow } from './callback';

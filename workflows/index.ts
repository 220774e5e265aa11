export { signalWorkflow } from './signal';
export { accountWorkflow } from './account';
export { callbackWorkflow, coalescedTradeCallbackWorkflow } from './callback';

// In support/ since the bench queues the same command (bench/scenarios/wake-up.ts).
export { buyCommand, commandQueue } from '../../support/commands';
// A bridge command's id is its account workflow's id: the tests name it as the service does.
export { accountWorkflowId as commandIdOf } from '../../src/domain/ids';

// In support/ since the bench queues the same command (bench/scenarios/wake-up.ts).
export { buyCommand } from '../../support/commands';

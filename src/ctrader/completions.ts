import type { Completion } from './connection';
import { ExecutionType, PayloadType, type ExecutionEvent } from './messages';

/**
 * Which execution event ends a trading request: Open API answers ProtoOANewOrderReq and its kin with
 * ProtoOAExecutionEvents, and the request is done at the one whose type says so.
 */
function byExecution(...types: number[]): Completion {
  return (env) => env.payloadType === PayloadType.PROTO_OA_EXECUTION_EVENT && types.includes((env.payload as unknown as ExecutionEvent).executionType);
}

export const MARKET_DONE = byExecution(ExecutionType.ORDER_FILLED, ExecutionType.ORDER_CANCELLED, ExecutionType.ORDER_EXPIRED);
export const ACCEPTED = byExecution(ExecutionType.ORDER_ACCEPTED);
export const REPLACED = byExecution(ExecutionType.ORDER_REPLACED);
export const CANCELLED = byExecution(ExecutionType.ORDER_CANCELLED);
export const FILLED = byExecution(ExecutionType.ORDER_FILLED);

import { isOpening } from '../domain/actions';
import type { BridgeCommand } from '../domain/bridge-protocol';
import type { RiskReason } from '../domain/reason-codes';
import type { AccountWorkflowInput } from '../domain/workflow-input';
import { withoutManagement } from '../domain/management';
import { planOrder } from './rules';

/**
 * One signal's bridge command for one account: the owner's risk rules on the settings snapshot taken at acceptance,
 * then the command the bridge runs. The one function both the ingress (dispatch at acceptance) and the account workflow
 * (supervision) apply, so both build the very same command for a commandId; only `nowMs` differs between them.
 *
 * A refusal by expiry alone still carries the command it would have been (`expired`): whoever finds a command the
 * other side may have queued needs it to ask the bridge what became of it.
 */
export type CommandPlan = { ok: true; command: BridgeCommand } | { ok: false; reason: RiskReason; expired?: BridgeCommand };

export function commandFor(input: AccountWorkflowInput, commandId: string, nowMs: number): CommandPlan {
  const { signal, target } = input;
  const acceptedAtMs = Date.parse(input.acceptedAt);
  const expiresAtMs = Date.parse(target.expiresAt);
  const plan = planOrder(signal, target.account, { acceptedAtMs, nowMs, expiresAtMs }, target.volumeRules);
  if (plan.ok) return { ok: true, command: build(input, commandId, plan.order) };
  if (plan.reason !== 'signal_expired') return plan;
  // The same rules at an instant within the command's life: were it still fresh, would it have gone out, and as what.
  const fresh = planOrder(signal, target.account, { acceptedAtMs, nowMs: Math.min(acceptedAtMs, expiresAtMs), expiresAtMs }, target.volumeRules);
  return fresh.ok ? { ok: false, reason: plan.reason, expired: build(input, commandId, fresh.order) } : plan;
}

function build(input: AccountWorkflowInput, commandId: string, order: Extract<ReturnType<typeof planOrder>, { ok: true }>['order']): BridgeCommand {
  const { signal, target } = input;
  // Sized by risk, the bridge decides the lots on the live account: the signal's own volume does not travel. Its trade
  // management travels as the plan resolved it (the owner's defaults merged), never as sent.
  const { meta: _meta, volume: signalVolume, ...sent } = signal;
  const rest = withoutManagement(sent);
  const fields = order.riskSizing ? rest : { ...rest, ...(signalVolume !== undefined ? { volume: signalVolume } : {}) };
  return {
    ...fields,
    ...order,
    ...(isOpening(signal.action) && target.account.risk.maxOpenPositions !== undefined ? { maxOpenPositions: target.account.risk.maxOpenPositions } : {}),
    // Only with figures to bound; absent from the input of signals accepted before it existed, so they replay as they ran.
    ...((order.riskSizing || order.lossGuards) && target.figuresMaxAgeMs !== undefined ? { figuresMaxAgeMs: target.figuresMaxAgeMs } : {}),
    commandId,
    seq: target.seq,
    signalId: input.signalId,
    accountId: target.account.id,
    acceptedAt: input.acceptedAt,
    expiresAt: target.expiresAt,
  };
}

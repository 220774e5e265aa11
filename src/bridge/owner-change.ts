import type { CommandQueue } from './queue';

/**
 * An account went to another owner: the old owner's commands that no bridge has taken are withdrawn in one step, and
 * each one's account workflow is told, so its signal ends `rejected` with `account_owner_changed` at once rather
 * than at its expiry (docs/registry.md, "Changing an account's owner"). A command a bridge already took cannot be
 * pulled back: the bridge's report decides it, as for any command.
 */

export interface OwnerChangeWithdrawal {
  /** Commands withdrawn: no bridge will be handed them. */
  withdrawn: string[];
  /** Commands a bridge held already: they run (or not) as the bridge decides, and its report ends them. */
  handedOut: string[];
  /** Withdrawn commands whose workflow could not be told (Temporal unreachable): they end at their expiry instead. */
  notTold: string[];
}

/** Tells one command's account workflow that its command was withdrawn (`commandId` is the workflow id). */
export type TellWithdrawn = (commandId: string) => Promise<void>;

export async function withdrawForOwnerChange(
  queue: Pick<CommandQueue, 'withdrawUntaken'>,
  tell: TellWithdrawn,
  accountId: string,
): Promise<OwnerChangeWithdrawal> {
  const { withdrawn, handedOut } = await queue.withdrawUntaken(accountId);
  const notTold: string[] = [];
  for (const commandId of withdrawn) await tell(commandId).catch(() => notTold.push(commandId));
  return { withdrawn, handedOut, notTold };
}

import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/**
 * The search attributes operators filter the Temporal UI by, listed once: the dev server (test infra, scripts/start.sh
 * through `node dist/scripts/search-attributes.js`), the cluster profile and the compose files register exactly these
 * (test/unit/search-attributes.test.ts checks the compose files).
 */
export const SignalIdKey = defineSearchAttributeKey('SignalId', SearchAttributeType.KEYWORD);
/** The account of an account workflow. */
export const AccountIdKey = defineSearchAttributeKey('AccountId', SearchAttributeType.KEYWORD);
/** Every account a signal's parent workflow runs on: `AccountIds = "acc-a1"` lists every signal that touched it. */
export const AccountIdsKey = defineSearchAttributeKey('AccountIds', SearchAttributeType.KEYWORD_LIST);
export const ActionKey = defineSearchAttributeKey('Action', SearchAttributeType.KEYWORD);
export const SymbolKey = defineSearchAttributeKey('Symbol', SearchAttributeType.KEYWORD);
/** filled, done or rejected, on the account workflow once it has its outcome. */
export const OutcomeKey = defineSearchAttributeKey('Outcome', SearchAttributeType.KEYWORD);
/** Why an account workflow ended rejected (docs/reason-codes.md): `Reason = "bridge_offline"`. */
export const ReasonKey = defineSearchAttributeKey('Reason', SearchAttributeType.KEYWORD);
/**
 * Whose signal it is: the owner of the accounts (every target of a signal is the sending secret's owner's, checked at
 * acceptance, so one Keyword), on the parent and on each account workflow, as it was at acceptance. The owner's
 * signal log (src/signals/log.ts) reads the account workflows by it: `OwnerId = "owner-1"`.
 */
export const OwnerIdKey = defineSearchAttributeKey('OwnerId', SearchAttributeType.KEYWORD);
/**
 * When the signal was accepted (its acceptedAt), the same on every workflow of the signal in every region: the
 * owner's log orders, pages and filters by it, where StartTime differs per workflow.
 */
export const ReceivedAtKey = defineSearchAttributeKey('ReceivedAt', SearchAttributeType.DATETIME);

/**
 * Temporal's limit on one search attribute value (the server's `frontend.searchAttributesSizeOfValueLimit` default,
 * and Temporal Cloud's): a start with a larger value is refused with INVALID_ARGUMENT. A KeywordList's value is its
 * JSON text.
 */
export const SEARCH_ATTRIBUTE_VALUE_MAX_BYTES = 2048;

/**
 * The accounts a signal's workflow lists in AccountIds: as many as fit in one value, in order. A broadcast to more
 * (about 150 accounts of 12-character ids) lists the first ones; every account is also on its own account workflow's
 * AccountId, so `AccountIds = "acc" OR AccountId = "acc"` finds every signal that touched it (docs/operating.md).
 */
export function accountIdsValue(accountIds: readonly string[]): string[] {
  const listed: string[] = [];
  let bytes = 2; // the brackets of the JSON array
  for (const id of accountIds) {
    const more = Buffer.byteLength(JSON.stringify(id)) + (listed.length > 0 ? 1 : 0);
    if (bytes + more > SEARCH_ATTRIBUTE_VALUE_MAX_BYTES) break;
    bytes += more;
    listed.push(id);
  }
  return listed;
}

const CLI_TYPES = {
  [SearchAttributeType.KEYWORD]: 'Keyword',
  [SearchAttributeType.KEYWORD_LIST]: 'KeywordList',
  [SearchAttributeType.DATETIME]: 'Datetime',
} as const;

export const SEARCH_ATTRIBUTES = [SignalIdKey, AccountIdKey, AccountIdsKey, ActionKey, SymbolKey, OutcomeKey, ReasonKey, OwnerIdKey, ReceivedAtKey].map(
  (k) => ({
    name: k.name,
    /** As the Temporal CLI and `--search-attribute NAME=TYPE` spell it. */
    type: CLI_TYPES[k.type],
  }),
);

/** temporal.api.enums.v1.IndexedValueType of each type, for operatorService.addSearchAttributes. */
export const INDEXED_VALUE_TYPES = { Keyword: 2, KeywordList: 7, Datetime: 6 } as const;

/** A value of the attribute's type, for a probe start that sets every attribute. */
export function probeValue(type: (typeof SEARCH_ATTRIBUTES)[number]['type']): string[] | Date[] {
  return type === 'Datetime' ? [new Date(0)] : ['probe'];
}

export const SEARCH_ATTRIBUTE_NAMES: readonly string[] = SEARCH_ATTRIBUTES.map((a) => a.name);

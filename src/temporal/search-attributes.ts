import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** Registered on the dev server at start (scripts and test setup pass the same names). */
export const SignalIdKey = defineSearchAttributeKey('SignalId', SearchAttributeType.KEYWORD);
export const AccountIdKey = defineSearchAttributeKey('AccountId', SearchAttributeType.KEYWORD);
export const ActionKey = defineSearchAttributeKey('Action', SearchAttributeType.KEYWORD);
export const SymbolKey = defineSearchAttributeKey('Symbol', SearchAttributeType.KEYWORD);
export const OutcomeKey = defineSearchAttributeKey('Outcome', SearchAttributeType.KEYWORD);

export const SEARCH_ATTRIBUTE_NAMES = ['SignalId', 'AccountId', 'Action', 'Symbol', 'Outcome'] as const;

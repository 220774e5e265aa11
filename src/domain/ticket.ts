import { z } from 'zod';

/**
 * The trade journal names a pending order's trade `order:<ticket>` and a position's by its ticket (src/trades/apply.ts).
 * A broker ticket of that form would be read as another trade's id: a position `order:999` as the pending order 999.
 */
export const ORDER_TRADE_PREFIX = 'order:';

const notJournalForm = (t: string) => !t.startsWith(ORDER_TRADE_PREFIX);
const JOURNAL_FORM_MESSAGE = `must not begin with ${ORDER_TRADE_PREFIX} (the trade journal's own form for pending orders)`;

/** A broker's position or order ticket as a bridge or a trader names it: bounded, and never in the journal's own form. */
export const brokerTicket = (schema: z.ZodString) => schema.refine(notJournalForm, JOURNAL_FORM_MESSAGE);

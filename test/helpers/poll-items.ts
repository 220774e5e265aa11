/**
 * The additive fields of a poll item (docs/poll.md) that a paper or real bridge's market fill carries: the tests that
 * check an item exactly add these to the spec's fields.
 */
export const MARKET_FILL = { entry: 'position', fill: { price: expect.any(Number), volume: expect.any(Number) } } as const;

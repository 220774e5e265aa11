import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CALLBACK_EVENT_TYPES, wantsEvent } from '../../src/domain/callback';
import { eventTypesSchema, normalEventTypes } from '../../src/callbacks/endpoints';

/** The callback event types an endpoint may choose (docs/callbacks.md), the same wherever they are listed. */
describe('callback event types', () => {
  test('when the dashboard offers the types, then it offers exactly the service’s, in its order', () => {
    const page = readFileSync(path.join(__dirname, '../../dashboard/activity-pages.js'), 'utf8');
    const listed = [...page.matchAll(/^\s*\['([a-z_.]+)', '/gm)].map((m) => m[1]);
    expect(listed).toEqual([...CALLBACK_EVENT_TYPES]);
  });

  test("when an endpoint lists no types, then it wants the signals' outcomes and no trade event; when it lists some, then only those", () => {
    expect(CALLBACK_EVENT_TYPES.filter((type) => wantsEvent({}, type))).toEqual(['signal.outcome', 'signal.exit_outcome']);
    expect(wantsEvent({ eventTypes: ['position.closed'] }, 'position.closed')).toBe(true);
    expect(wantsEvent({ eventTypes: ['signal.exit_outcome'] }, 'signal.exit_outcome')).toBe(true);
    expect(wantsEvent({ eventTypes: ['signal.exit_outcome'] }, 'signal.outcome')).toBe(false);
  });

  test('when types are given at registration, then an unknown or empty list is refused and a known one kept once each, in order', () => {
    expect(eventTypesSchema.safeParse([]).success).toBe(false);
    expect(eventTypesSchema.safeParse(['position.exploded']).success).toBe(false);
    expect(normalEventTypes(eventTypesSchema.parse(['position.closed', 'signal.outcome', 'position.closed']))).toEqual(['signal.outcome', 'position.closed']);
  });
});

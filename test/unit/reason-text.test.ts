import { REASON_CODES, reasonText } from '../../src/domain/reason-codes';

/** A rejection's reason in words for the owner's pages; the code itself is shown beside it. */
describe('reasonText', () => {
  test.each([
    ['risk_stop_loss_required', REASON_CODES.risk_stop_loss_required.meaning],
    ['broker:10019 No money', 'the broker refused it: No money'],
    ['broker:10036', 'the broker refused it: the position does not exist (already closed)'],
    ['broker:TRADING_BAD_VOLUME Bad volume', 'the broker refused it: Bad volume'],
    ['broker:99999', 'the broker refused it: code 99999'],
    ['something_new', 'something_new'],
  ])('%s', (reason, text) => {
    expect(reasonText(reason)).toBe(text);
  });
});

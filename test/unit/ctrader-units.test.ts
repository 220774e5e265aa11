import { SlidingWindowLimiter } from '../../src/ctrader/rate-limiter';
import { isValidVolume, lotsToVolume, pipSize, pipsToRelative, pointsBetween, symbolSpec, toInstrument, volumeToLots } from '../../src/ctrader/units';

/** Volumes in cents of units, lot sizes, pip positions and relative stops, as ProtoOASymbol and ProtoOANewOrderReq define them. */

const eurusd = symbolSpec('EURUSD', {
  symbolId: 1,
  digits: 5,
  pipPosition: 4,
  lotSize: 10_000_000,
  minVolume: 100_000,
  stepVolume: 100_000,
  maxVolume: 1_000_000_000,
})!;
const xauusd = symbolSpec('XAUUSD', { symbolId: 41, digits: 2, pipPosition: 1, lotSize: 10_000, minVolume: 100, stepVolume: 100, maxVolume: 500_000 })!;
const us30 = symbolSpec('US30', { symbolId: 7, digits: 1, pipPosition: 0, lotSize: 100, minVolume: 10, stepVolume: 10, maxVolume: 5_000 })!;

describe('lots and Open API volumes (cents of units)', () => {
  test('when 0.1 lot of EURUSD (lot size 100 000 units = 10 000 000 cents) is sent, then the volume is 1 000 000 cents', () => {
    expect(lotsToVolume(0.1, eurusd)).toBe(1_000_000);
    expect(lotsToVolume(1, eurusd)).toBe(10_000_000);
    expect(lotsToVolume(0.07, eurusd)).toBe(700_000);
  });

  test('when volumes come back from the broker, then they are lots without float noise', () => {
    expect(volumeToLots(1_000_000, eurusd)).toBe(0.1);
    expect(volumeToLots(600_000, eurusd)).toBe(0.06);
    expect(volumeToLots(300, xauusd)).toBe(0.03);
    expect(volumeToLots(10, us30)).toBe(0.1);
  });

  test('when the symbol says step, min and max in cents, then hello reports them in lots with the pip size from pipPosition', () => {
    expect(toInstrument(eurusd)).toEqual({ name: 'EURUSD', digits: 5, pipSize: 0.0001, volumeStep: 0.01, volumeMin: 0.01, volumeMax: 100 });
    expect(toInstrument(xauusd)).toEqual({ name: 'XAUUSD', digits: 2, pipSize: 0.1, volumeStep: 0.01, volumeMin: 0.01, volumeMax: 50 });
    expect(toInstrument(us30)).toEqual({ name: 'US30', digits: 1, pipSize: 1, volumeStep: 0.1, volumeMin: 0.1, volumeMax: 50 });
  });

  test('when a volume is off the step, below the minimum or above the maximum, then it is not valid', () => {
    expect(isValidVolume(lotsToVolume(0.015, eurusd), eurusd)).toBe(false);
    expect(isValidVolume(lotsToVolume(0.02, eurusd), eurusd)).toBe(true);
    expect(isValidVolume(lotsToVolume(101, eurusd), eurusd)).toBe(false);
    expect(isValidVolume(50_000, eurusd)).toBe(false);
  });

  test('when a symbol has no lot size or no step, then it cannot be sized and is left out', () => {
    expect(symbolSpec('X', { symbolId: 9, digits: 5, pipPosition: 4, stepVolume: 100 })).toBeUndefined();
    expect(symbolSpec('X', { symbolId: 9, digits: 5, pipPosition: 4, lotSize: 100 })).toBeUndefined();
  });
});

describe('pips, relative stops and points', () => {
  test('when stops are given in pips, then the relative stop is in 1/100000 of a price unit', () => {
    expect(pipSize(eurusd)).toBe(0.0001);
    expect(pipsToRelative(20, eurusd)).toBe(200); // 0.002
    expect(pipsToRelative(100, { pipPosition: 2 })).toBe(100_000); // USDJPY: 1.00
    expect(pipsToRelative(25, xauusd)).toBe(250_000); // 2.5
  });

  test('when a stop-limit carries its limit as a distance from the trigger, then it is counted in points of the symbol', () => {
    expect(pointsBetween(1.0861, 1.0856, 5)).toBe(50);
    expect(pointsBetween(150.5, 150.0, 3)).toBe(500);
  });
});

describe('the request limit of one Open API connection', () => {
  // The limiter's clock is injected and its wake-up is a timer: both are moved by the test (fake timers), so no real
  // second passes, and the window's edge is checked to the millisecond.
  test('when 120 requests ask at once, then at most 50 go out in any second and all go out in order', async () => {
    jest.useFakeTimers();
    try {
      let now = 0;
      const limiter = new SlidingWindowLimiter(50, 1000, () => now);
      const order: number[] = [];
      const all = Array.from({ length: 120 }, (_, i) => limiter.take().then(() => order.push(i)));
      await jest.advanceTimersByTimeAsync(0);
      expect(order.length).toBe(50);
      now = 999;
      await jest.advanceTimersByTimeAsync(999);
      expect(order.length).toBe(50);
      now = 1000;
      await jest.advanceTimersByTimeAsync(1);
      expect(order.length).toBe(100);
      now = 2000;
      await jest.advanceTimersByTimeAsync(1000);
      await Promise.all(all);
      expect(order).toEqual(Array.from({ length: 120 }, (_, i) => i));
    } finally {
      jest.useRealTimers();
    }
  });
});

import { Mt5BridgeDriver } from './mt5-driver';
import { bridgeConformance } from './suite';

// The Python MT5 bridge as a trader runs it, on the MetaTrader5 double (the only thing not real here).
bridgeConformance(() => new Mt5BridgeDriver());

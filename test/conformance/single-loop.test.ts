import { CtraderConnectorDriver } from './ctrader-driver';
import { PaperBridgeDriver } from './paper-driver';
import { bridgeConformance } from './suite';

// The paper bridge and the cTrader connector run their cases over multi-account sessions by default (paper.test.ts,
// ctrader.test.ts); here over each account's own loop, the form they use with an ingress that has no sessions.
bridgeConformance(() => new PaperBridgeDriver('mt5', 'off'));
bridgeConformance(() => new CtraderConnectorDriver('off'));

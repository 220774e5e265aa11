import { CtraderConnectorDriver } from './ctrader-driver';
import { bridgeConformance } from './suite';

// The cTrader connector against its Open API double (built from Spotware's published definitions).
bridgeConformance(() => new CtraderConnectorDriver());

import { PaperBridgeDriver } from './paper-driver';
import { bridgeConformance } from './suite';

// The reference bridge passes the conformance suite on both platforms' broker codes.
bridgeConformance(() => new PaperBridgeDriver('mt5'));
bridgeConformance(() => new PaperBridgeDriver('ctrader'));

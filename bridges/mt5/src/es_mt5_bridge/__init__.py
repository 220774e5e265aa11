"""External Signals bridge for MetaTrader 5 (docs/bridge-protocol.md, docs/mt5-bridge.md)."""

# The MT5 line of bridge versions (docs/capabilities.md): 3.x is this Python bridge, all 17 actions;
# 3.3.0 adds the copy-trading stop-out (`stop_out`, protocol 1.4).
__version__ = "3.3.0"

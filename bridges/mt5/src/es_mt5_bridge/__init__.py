"""External Signals bridge for MetaTrader 5 (docs/bridge-protocol.md, docs/mt5-bridge.md)."""

# The MT5 line of bridge versions (docs/capabilities.md): 3.x is this Python bridge, all 17 actions.
__version__ = "3.2.0"

"""External Signals bridge for MetaTrader 5 (docs/bridge-protocol.md, docs/mt5-bridge.md)."""

# The MT5 line of bridge versions (docs/capabilities.md): 3.x is this Python bridge, all 17 actions;
# 3.3.0 adds the copy-trading stop-out (`stop_out`, protocol 1.4); 3.4.0 reads its settings from a config file
# (`--config es-mt5-bridge.ini`, the file the service's download writes); 3.5.0 sends trade events and the book
# (`trade_events`, protocol 1.5); 3.6.0 manages a trade after its entry: trailing stop, breakeven trigger,
# take-profit levels, close opposite and the spread guard (protocol 1.6, docs/trade-management.md). The one place of
# the version: the wheel (pyproject.toml), the hello and the service's current MT5 bridge version (src/domain/capabilities.ts) follow it.
__version__ = "3.6.0"

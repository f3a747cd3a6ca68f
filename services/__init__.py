"""What the tools wrap: Google-shaped Calendar, Gmail and Tasks services, and the local workspace behind them."""

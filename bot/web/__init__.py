"""The control-room web view: ground map, live log, board, tiles and post-match page."""

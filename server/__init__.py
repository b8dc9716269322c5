"""The tonk-server: asyncio I/O around the game core."""

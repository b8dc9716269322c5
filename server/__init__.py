"""The tonk-server: asyncio I/O around the game core."""

import warnings

# asyncssh names DSA's classes when it is imported, which newer releases of cryptography
# deprecate: without this, a host would read eight lines of warnings at every start, about a
# kind of key the SSH door never uses (its host key is ed25519).
warnings.filterwarnings("ignore", message="DSA is deprecated", module=r"asyncssh\.")

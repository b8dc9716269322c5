"""The tonk-client: a Textual table in the terminal."""

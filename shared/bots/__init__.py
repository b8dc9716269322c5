"""The bots (easy, sharp, expert) and the coach that asks expert's view."""

"""The admin screen: its API through the function host, its token checks, and the page in a real browser."""

"""What the Vercel functions in api/ share. The functions stay thin adapters over it."""

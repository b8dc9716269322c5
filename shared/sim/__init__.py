"""The simulator: bots playing hand after hand from a seed, its tally, and `tonk-sim`, its
command (the one edge in shared/: it prints and uses processes)."""

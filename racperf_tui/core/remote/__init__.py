"""Other nodes: SSH (ssh, ssh_target, ssh_host), the cluster file, and what racperf asks of a
node over SSH (its guard facts, runs, checks, diskstats, kernel net)."""

"""The dashboard's tabs, one module each: Disks (iostat_panel), Runs, Network, Cluster."""

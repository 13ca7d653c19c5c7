"""racperf: live storage and interconnect benchmarking for Oracle RAC / database nodes."""

__version__ = "0.1.0"
